package s3store_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// benchImageSize is the image the backends' benchmarks back up and read:
// CAIRN_BENCH_MB overrides it (MiB).
func benchImageSize() int {
	if v, err := time.ParseDuration(os.Getenv("CAIRN_BENCH_MB") + "ms"); err == nil && v > 0 {
		return int(v.Milliseconds()) << 20
	}
	return 256 << 20
}

// benchStores are the stores compared: local, MinIO on loopback, and
// MinIO through a proxy that adds 20 ms to every request.
var benchStores = []struct {
	name string
	open func(b *testing.B) *store.Store
}{
	{"local", func(b *testing.B) *store.Store { return storetest.NewStore(b) }},
	{"minio", func(b *testing.B) *store.Store { return storetest.NewRemoteStore(b) }},
	{"minio-20ms", func(b *testing.B) *store.Store {
		srv := miniotest.Start(b)
		p := miniotest.NewProxy(b, srv.Endpoint, 20*time.Millisecond)
		s, _ := storetest.NewRemoteStoreOn(b, srv, s3store.Config{Config: srv.ProxyConfig(p, srv.NewBucket(b))})
		return s
	}},
}

// BenchmarkBackendBackup: a first backup (every chunk new) of an
// incompressible image into a fresh store of each backend, default
// workers (the Uploader's request parallelism is the backend's).
//
//	CAIRN_MINIO=/var/tmp/minio-bin/minio go test ./store -run '^$' -bench BackendBackup -benchtime 3x
func BenchmarkBackendBackup(b *testing.B) {
	data := storetest.RandBytes("bench", benchImageSize())
	f := storetest.TempFile(b, data)
	for _, bs := range benchStores {
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := range b.N {
				b.StopTimer()
				s := bs.open(b)
				b.StartTimer()
				backupBench(b, s, f, time.Unix(1700000000+int64(i), 0))
			}
		})
	}
}

func backupBench(b *testing.B, s *store.Store, f *os.File, at time.Time) store.Snapshot {
	ctx := context.Background()
	bk, err := s.StartBackup(ctx, store.Group{Type: "vm", ID: "bench"}, at)
	if err != nil {
		b.Fatal(err)
	}
	bk.Sync = store.SyncNone
	if err := bk.AddImage(ctx, "disk.img", f, store.ImageOptions{}); err != nil {
		bk.Abort()
		b.Fatal(err)
	}
	if err := bk.Finish(); err != nil {
		b.Fatal(err)
	}
	return bk.Snapshot()
}

// BenchmarkBackendRead: a sequential read of the image through the
// store's reader (a fresh chunk cache, and an empty on-disk chunk cache
// for a remote store: every chunk from the bucket) with the store's
// readahead. The local store's chunk files stay in the page cache.
//
//	CAIRN_MINIO=/var/tmp/minio-bin/minio go test ./store -run '^$' -bench BackendRead -benchtime 3x
func BenchmarkBackendRead(b *testing.B) {
	data := storetest.RandBytes("bench", benchImageSize())
	f := storetest.TempFile(b, data)
	for _, bs := range benchStores {
		b.Run(bs.name, func(b *testing.B) {
			s := bs.open(b)
			snap := backupBench(b, s, f, time.Unix(1700000000, 0))
			m, err := s.ReadManifest(snap)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				os.RemoveAll(filepath.Join(s.Root(), ".chunk-cache"))
				x, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
				if err != nil {
					b.Fatal(err)
				}
				c, err := store.NewCache(s, 256<<20)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				n, err := chunkcache.NewReader(context.Background(), x, c, s.Readahead()).WriteTo(io.Discard)
				if err != nil || n != int64(len(data)) {
					b.Fatalf("read %d of %d bytes: %v", n, len(data), err)
				}
				b.StopTimer()
				c.Close()
				x.Close()
				b.StartTimer()
			}
		})
	}
}
