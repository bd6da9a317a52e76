package tape

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/cairnfs/cairn/store"
)

// BenchmarkRestore compares restoring one 64 MiB image snapshot (1 MiB
// chunks) from a virtual tape with inserting the same chunks straight
// into an empty store from memory (4 goroutines each, then syncfs as
// restore does before it commits): restore's overhead over the store's
// chunk insert rate (tape reading, CRC, digest).
func BenchmarkRestore(b *testing.B) {
	dir := b.TempDir()
	s, err := store.CreateWith(filepath.Join(dir, "src"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(dir, "disk")
	os.WriteFile(path, randBytes("bench-restore", 64<<20), 0o644)
	f, _ := os.Open(path)
	bk, err := s.StartBackup(bg, store.Group{Type: store.TypeVM, ID: "1"}, t0)
	if err != nil {
		b.Fatal(err)
	}
	bk.Sync = store.SyncNone
	if err := bk.AddImage(bg, "disk.img", f, store.ImageOptions{ChunkSize: 1 << 20}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	if err := bk.Finish(); err != nil {
		b.Fatal(err)
	}
	src := &StoreSource{S: s, StoreName: "bench"}
	snap := bk.Snapshot().String()
	d := openDriveB(b)
	defer d.Close()
	opts := ExportOptions{Pool: "bench", Logger: quiet, PoolOptions: media.PoolOptions{TapeSize: 256 << 20, AutoCreate: true}}
	if rep, err := Export(bg, d, src, []string{snap}, opts); err != nil || rep.Failed() != 0 {
		b.Fatalf("%v %+v", err, rep)
	}
	digests, _ := src.Chunks(bg, snap)
	var blobs [][]byte
	var total int64
	for _, x := range digests {
		blob, _ := src.LoadChunk(bg, x)
		blobs = append(blobs, blob)
		total += int64(len(blob))
	}
	target := func(b *testing.B) *store.Store {
		b.StopTimer()
		defer b.StartTimer()
		t, err := store.CreateWith(filepath.Join(b.TempDir(), "dst"), store.CreateOptions{LazyPrefixDirs: true})
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	b.Run("insert", func(b *testing.B) {
		b.SetBytes(total)
		for b.Loop() {
			t := target(b)
			ch := make(chan int)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for i := range ch {
						if _, err := t.InsertChunk(digests[i], blobs[i]); err != nil {
							b.Error(err)
						}
					}
				})
			}
			for i := range blobs {
				ch <- i
			}
			close(ch)
			wg.Wait()
			syncfs(b, t.Root()) // restore syncs before it commits a snapshot
			t.Close()
		}
	})
	b.Run("restore", func(b *testing.B) {
		b.SetBytes(total)
		for b.Loop() {
			t := target(b)
			sink, err := NewStoreSink(bg, t)
			if err != nil {
				b.Fatal(err)
			}
			rr, err := Restore(bg, d, sink, RestoreOptions{Pool: "bench", Workers: 4, Logger: quiet})
			sink.Close()
			if err != nil || rr.Failed() != 0 || rr.Chunks != int64(len(digests)) {
				b.Fatalf("%v %+v", err, rr)
			}
			t.Close()
		}
	})
}

func syncfs(b *testing.B, dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		b.Fatal(err)
	}
}
