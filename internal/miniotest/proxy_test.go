package miniotest_test

import (
	"context"
	"net"
	"net/http"
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

// proxiedBucket is a new bucket of the shared server through a new proxy
// without delay.
func proxiedBucket(t *testing.T) (*miniotest.Proxy, *objstore.Bucket) {
	t.Helper()
	srv := miniotest.Start(t)
	p := miniotest.NewProxy(t, srv.Endpoint, 0)
	b, err := objstore.Open(context.Background(), srv.ProxyConfig(p, srv.NewBucket(t)), srv.Credentials(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// PutsStored fires once its PUTs of matching keys are answered 2xx by the
// server (not for other keys, a GET or a PUT refused); NextRequest on the
// next request, whatever its answer.
func TestProxyWatches(t *testing.T) {
	p, b := proxiedBucket(t)
	ctx := context.Background()
	stored, next := p.PutsStored("x/", 2), p.NextRequest()
	fired := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	put := func(k string, cond objstore.Cond) error {
		_, err := b.Put(ctx, k, cond, []byte("v"))
		return err
	}
	if err := put("y/1", objstore.Cond{}); err != nil {
		t.Fatal(err)
	}
	if !fired(next) {
		t.Error("NextRequest did not fire on a request")
	}
	if err := put("x/1", objstore.Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Get(ctx, "x/1", 10, nil); err != nil {
		t.Fatal(err)
	}
	if err := put("x/1", objstore.Cond{IfAbsent: true}); err == nil {
		t.Fatal("a PUT If-None-Match over an object succeeded")
	}
	if fired(stored) {
		t.Fatal("PutsStored(2) fired after one PUT stored, one refused, a GET and a PUT of another key")
	}
	if err := put("x/2", objstore.Cond{}); err != nil {
		t.Fatal(err)
	}
	if !fired(stored) {
		t.Error("PutsStored(2) did not fire after two PUTs stored")
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

// HoldAfterPuts holds the requests after its n-th PUT until Release;
// Unreachable fires when the proxy answers 503 for a server it cannot
// reach.
func TestProxyHoldUnreachable(t *testing.T) {
	p, b := proxiedBucket(t)
	ctx := context.Background()
	held := p.HoldAfterPuts("x/", 1)
	if _, err := b.Put(ctx, "x/1", objstore.Cond{}, []byte("v")); err != nil {
		t.Fatal(err)
	}
	<-held
	arrived, stored := p.NextRequest(), p.PutsStored("y/", 1)
	got := make(chan error, 1)
	go func() {
		_, err := b.Put(ctx, "y/1", objstore.Cond{}, []byte("v"))
		got <- err
	}()
	<-arrived
	select {
	case <-stored:
		t.Fatal("a PUT after the hold reached the server before Release")
	case err := <-got:
		t.Fatalf("a PUT after the hold returned before Release: %v", err)
	default:
	}
	p.Release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	<-stored

	// A server that is not there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	down := miniotest.NewProxy(t, "http://"+addr, 0)
	met := down.Unreachable()
	resp, err := http.Get(down.Endpoint() + "/bucket/key")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("proxy to a server not there: %s, want 503", resp.Status)
	}
	<-met
}
