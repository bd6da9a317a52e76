package restore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
)

// BenchmarkImageRestoreEncrypted restores the same 128 MiB image (4 MiB
// chunks: half incompressible, half compressible 8:1) side by side from
// a plain and an encrypted snapshot, as a stream to io.Discard.
//
//	go test ./jobs/restore -run xxx -bench ImageRestoreEncrypted -benchtime 4x
func BenchmarkImageRestoreEncrypted(b *testing.B) {
	const size = 128 << 20
	dir := b.TempDir()
	s, err := store.CreateWith(filepath.Join(dir, "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := randBytes(size, 11)
	for i := size / 2; i+64 <= size; i += 64 {
		clear(data[i+8 : i+64]) // 8 random bytes in 64: zstd keeps about 1/8
	}
	key, err := crypt.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	defer key.Wipe()
	s.SetKeys(store.NewKeys(key))
	open := func(id string, k *crypt.Key) index.Index {
		bk, err := s.StartBackup(context.Background(), store.Group{Type: "vm", ID: id}, time.Unix(1700000000, 0))
		if err != nil {
			b.Fatal(err)
		}
		bk.Sync = store.SyncNone
		if k != nil {
			if err := bk.Encrypt(k); err != nil {
				b.Fatal(err)
			}
		}
		if err := bk.AddImage(context.Background(), "disk.img", bytes.NewReader(data), store.ImageOptions{ChunkSize: chunk.DefaultChunkSize}); err != nil {
			b.Fatal(err)
		}
		if err := bk.Finish(); err != nil {
			b.Fatal(err)
		}
		m, _ := s.ReadManifest(bk.Snapshot())
		x, err := s.OpenSnapshotIndex(bk.Snapshot(), m, "disk.img.fidx")
		if err != nil {
			b.Fatal(err)
		}
		return x
	}
	indexes := []struct {
		name string
		x    index.Index
	}{{"plain", open("plain", nil)}, {"encrypted", open("enc", key)}}
	for _, threads := range []int{1, 2} {
		for _, ix := range indexes {
			b.Run(fmt.Sprintf("%s/stream-threads=%d", ix.name, threads), func(b *testing.B) {
				b.SetBytes(size)
				cpu := crypttest.CPUTime()
				for b.Loop() {
					if _, err := Image(context.Background(), ix.x, s, Target{Stream: io.Discard}, Options{Threads: threads}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((crypttest.CPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
	for _, ix := range indexes {
		ix.x.Close()
	}
}
