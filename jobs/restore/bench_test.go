package restore

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sync/errgroup"
)

// BenchmarkImageRestore restores a 256 MiB incompressible image (4 MiB
// chunks, held in the page cache) as a stream to io.Discard with 1 and 2
// threads, and to a file with 1, 2 and 4 threads. decode-limit is what
// the stream is held to: the same blobs decoded and checked from memory
// by one goroutine per CPU.
//
//	go test ./jobs/restore -run xxx -bench ImageRestore -benchtime 8x
func BenchmarkImageRestore(b *testing.B) {
	dir := b.TempDir()
	s, err := store.CreateWith(filepath.Join(dir, "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		b.Fatal(err)
	}
	src := filepath.Join(dir, "src")
	os.WriteFile(src, randBytes(256<<20, 9), 0o644)
	f, _ := os.Open(src)
	bk, _ := s.StartBackup(context.Background(), store.Group{Type: "vm", ID: "bench"}, time.Time{})
	bk.Sync = store.SyncNone
	if err := bk.AddImage(context.Background(), "disk.img", f, store.ImageOptions{ChunkSize: chunk.DefaultChunkSize}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	bk.Finish()
	m, _ := s.ReadManifest(bk.Snapshot())
	x, err := s.OpenSnapshotIndex(bk.Snapshot(), m, "disk.img.fidx")
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	// CAIRN_BENCH_OUT=/dev/shm measures the restore without the target
	// disk's write speed (a file in the page cache that is never written
	// back).
	outDir := dir
	if d := os.Getenv("CAIRN_BENCH_OUT"); d != "" {
		outDir = d
	}
	// The limit the restore is held to: the same blobs, held in memory,
	// decoded and checked by one goroutine per CPU.
	b.Run("decode-limit", func(b *testing.B) {
		blobs := make([][]byte, x.Len())
		for i := range blobs {
			d, _, _ := x.Chunk(i)
			blob, err := s.ReadChunk(context.Background(), d, store.ChunkOptions{})
			if err != nil {
				b.Fatal(err)
			}
			blobs[i] = blob.Bytes()
		}
		b.SetBytes(x.Size())
		b.ResetTimer()
		for b.Loop() {
			var next atomic.Int64
			var g errgroup.Group
			for range runtime.NumCPU() {
				g.Go(func() error {
					for i := int(next.Add(1) - 1); i < len(blobs); i = int(next.Add(1) - 1) {
						d, start, end := x.Chunk(i)
						if _, err := chunk.DecodeChunk(nil, blobs[i], d, int(end-start)); err != nil {
							return err
						}
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("stream-threads=%d", threads), func(b *testing.B) {
			b.SetBytes(x.Size())
			for b.Loop() {
				if _, err := Image(context.Background(), x, s, Target{Stream: io.Discard}, Options{Threads: threads}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, threads := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(x.Size())
			for b.Loop() {
				out, _ := os.Create(filepath.Join(outDir, "cairn-bench-restore.out"))
				if _, err := Image(context.Background(), x, s, Target{File: out}, Options{Threads: threads}); err != nil {
					b.Fatal(err)
				}
				out.Close()
				os.Remove(out.Name())
			}
		})
	}
}
