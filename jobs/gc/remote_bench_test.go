package gc

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// BenchmarkRemoteGC collects a MinIO bucket of 20,000 small chunks and a
// snapshot of 64 more: mark, then the sweep's listing merge-joined with
// the marked set (the default 24 h 5 min cutoff: nothing is deleted, so
// every iteration does the same work). chunks/s counts the objects
// listed per second.
func BenchmarkRemoteGC(b *testing.B) {
	const n = 20000
	s, _ := storetest.NewRemoteStoreOn(b, miniotest.Start(b), s3store.Config{})
	backup(b, s, vm, 0, storetest.RandBytes("bench", 64*testChunk))
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				data := []byte(fmt.Sprintf("chunk %d", i))
				blob, err := chunk.EncodeBlob(nil, data, false)
				if err == nil {
					_, err = s.InsertChunk(chunk.Sum(data), blob)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ResetTimer()
	var files int64
	for range b.N {
		rep, err := Run(context.Background(), s, Options{AtimeCutoff: DefaultAtimeCutoff})
		if err != nil {
			b.Fatal(err)
		}
		files = rep.ChunkFiles
	}
	if files < n {
		b.Fatalf("listed %d chunks, want at least %d", files, n)
	}
	b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}
