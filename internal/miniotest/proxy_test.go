package miniotest_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/objstore"
)

// Every request through the proxy reaches MinIO (signed requests pass
// unchanged) and is counted.
func TestProxy(t *testing.T) {
	srv := miniotest.Start(t)
	p := miniotest.NewProxy(t, srv.Endpoint, 20*time.Millisecond)
	ctx := context.Background()
	b, err := objstore.Open(ctx, srv.ProxyConfig(p, srv.NewBucket(t)), srv.Credentials(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := p.Requests()
	if _, err := b.Put(ctx, "k", objstore.Cond{}, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := b.Get(ctx, "k", 10, nil); err != nil || string(data) != "v" {
		t.Fatalf("get through the proxy: %q %v", data, err)
	}
	if n := p.Requests() - before; n != 2 {
		t.Fatalf("%d requests through the proxy for a put and a get, want 2", n)
	}
}

// BenchmarkProxyHead measures a HEAD directly and through a 20 ms proxy
// (ms/op: the delay the proxy adds shows as the difference).
func BenchmarkProxyHead(b *testing.B) {
	srv := miniotest.Start(b)
	p := miniotest.NewProxy(b, srv.Endpoint, 20*time.Millisecond)
	bucket := srv.NewBucket(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		cfg  objstore.Config
	}{{"direct", srv.Config(bucket)}, {"proxy20ms", srv.ProxyConfig(p, bucket)}} {
		b.Run(bc.name, func(b *testing.B) {
			bk, err := objstore.Open(ctx, bc.cfg, srv.Credentials(), objstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := bk.Put(ctx, "k", objstore.Cond{}, []byte("v")); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for b.Loop() {
				if _, err := bk.Head(ctx, "k"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/head")
		})
	}
}
