package restore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

// BenchmarkImageRestore restores a 256 MiB incompressible image (4 MiB
// chunks) to a file with 1, 2 and 4 threads:
//
//	go test ./jobs/restore -run xxx -bench ImageRestore -benchtime 5x
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
	if err := bk.AddImage(context.Background(), "disk.img", f, store.ImageOptions{}); err != nil {
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
