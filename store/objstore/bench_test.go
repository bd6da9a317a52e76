package objstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/objstore"
)

// BenchmarkPutGet measures chunk-sized uploads and downloads with 8 in
// flight, directly and through a 20 ms proxy (MB/s).
//
//	CAIRN_MINIO=... go test -run '^$' -bench PutGet -benchtime 200x ./store/objstore
func BenchmarkPutGet(b *testing.B) {
	srv := miniotest.Start(b)
	proxy := miniotest.NewProxy(b, srv.Endpoint, 20*time.Millisecond)
	bucket := srv.NewBucket(b)
	ctx := context.Background()
	data := make([]byte, 4<<20)
	rand.NewChaCha8([32]byte{2}).Read(data)
	for _, route := range []struct {
		name string
		cfg  objstore.Config
	}{{"direct", srv.Config(bucket)}, {"proxy20ms", srv.ProxyConfig(proxy, bucket)}} {
		bk, err := objstore.Open(ctx, route.cfg, srv.Credentials(), objstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var seq atomic.Int64
		b.Run(route.name+"/put4MiB", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.SetParallelism(4) // 8 in flight on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := fmt.Sprintf("%s/%d", route.name, seq.Add(1)%64)
					if _, err := bk.Put(ctx, k, objstore.Cond{}, data[:len(data)/2], data[len(data)/2:]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		// objects of a Go-tree archive's average chunk (~290 KiB), 16 in
		// flight as a remote Uploader has them: the floor of a sync into
		// a bucket, where each chunk is its own object
		b.Run(route.name+"/put256KiB", func(b *testing.B) {
			small := data[:256<<10]
			b.SetBytes(int64(len(small)))
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := fmt.Sprintf("%s/small/%d", route.name, seq.Add(1))
					if _, err := bk.Put(ctx, k, objstore.Cond{}, small); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(route.name+"/get4MiB", func(b *testing.B) {
			// its own objects: the put sub-benchmarks may be filtered out
			const objects = 8
			for i := range objects {
				if _, err := bk.Put(ctx, fmt.Sprintf("%s/get/%d", route.name, i), objstore.Cond{}, data); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			b.SetBytes(int64(len(data)))
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 0, len(data))
				for pb.Next() {
					k := fmt.Sprintf("%s/get/%d", route.name, seq.Add(1)%objects)
					var err error
					if buf, _, err = bk.Get(ctx, k, int64(len(data)), buf); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
