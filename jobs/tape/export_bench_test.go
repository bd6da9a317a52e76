package tape

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/cairnfs/cairn/store"
)

// BenchmarkExport exports one 64 MiB image snapshot (1 MiB chunks) with
// 1, 2, 4 and 8 reader goroutines and reports MB/s and the share of time
// the tape writer waited for chunks. The page cache is not dropped: run
// `sync; echo 3 > /proc/sys/vm/drop_caches` between runs for cold reads.
func BenchmarkExport(b *testing.B) {
	s, err := store.CreateWith(filepath.Join(b.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := randBytes("bench", 64<<20)
	path := filepath.Join(b.TempDir(), "disk")
	os.WriteFile(path, data, 0o644)
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
	snap := bk.Snapshot().String()
	src := &StoreSource{S: s, StoreName: "bench"}
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			var bytes, idle, total float64
			for b.Loop() {
				d := openDriveB(b)
				opts := ExportOptions{Pool: "bench", Workers: n, Logger: quiet,
					PoolOptions: media.PoolOptions{TapeSize: 256 << 20, AutoCreate: true}}
				rep, err := Export(bg, d, src, []string{snap}, opts)
				if err != nil || rep.Failed() != 0 {
					b.Fatalf("%v %+v", err, rep)
				}
				bytes += float64(rep.Bytes)
				idle += rep.WriterIdle.Seconds()
				total += rep.Duration.Seconds()
				d.Close()
			}
			b.ReportMetric(bytes/total/1e6, "MB/s")
			b.ReportMetric(100*idle/total, "%writer-idle")
		})
	}
}
