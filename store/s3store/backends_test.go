package s3store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
)

// The remote stores of this package's own tests, on an in-memory bucket
// or on MinIO (storetest's Bucket is for the external tests: it imports
// this package).

// newRemoteTest creates a remote store on a fresh bucket of MinIO (with
// cfg's cache size) and returns it with a bucket handle of the test's
// own, to act behind the store's back.
func newRemoteTest(t *testing.T, cacheSize int64) (*store.Store, *objstore.Bucket, Config) {
	t.Helper()
	rt := newMinIOTest(t, cacheSize, 0)
	return rt.s, rt.b.(*objstore.Bucket), rt.cfg
}

// remoteTest is a remote store on a fresh bucket, in memory or on MinIO,
// with what a test does behind the store's back.
type remoteTest struct {
	s   *store.Store
	b   objstore.Objects // a handle of the test's own
	cfg Config
	mem *memstore.Bucket // nil on MinIO
	// proxy is MinIO's proxy (its lies); nil in memory
	proxy *miniotest.Proxy
	// requests counts the requests the bucket has served
	requests func() int64
}

// pass lets d go by: the in-memory bucket's clock moves on; on MinIO
// the test sleeps.
func (rt remoteTest) pass(d time.Duration) {
	if rt.mem != nil {
		rt.mem.Advance(d)
		return
	}
	time.Sleep(d)
}

// reopen opens the store in dir on the test's bucket (created there
// with Create on MinIO, CreateOn in memory).
func (rt remoteTest) reopen(t *testing.T, dir string) (*store.Store, error) {
	if rt.mem != nil {
		return OpenOn(dir, rt.mem)
	}
	return store.Open(dir)
}

// create creates a store directory in dir on the test's bucket.
func (rt remoteTest) create(ctx context.Context, dir string) (*store.Store, error) {
	if rt.mem != nil {
		return CreateOn(ctx, dir, rt.cfg, rt.mem, store.CreateOptions{})
	}
	return Create(ctx, dir, rt.cfg, store.CreateOptions{})
}

// eachRemote runs f on a remote store (of cache size cacheSize) on an
// in-memory bucket ("mem") and on MinIO ("minio"), each a subtest.
func eachRemote(t *testing.T, cacheSize int64, f func(t *testing.T, rt remoteTest)) {
	t.Run("mem", func(t *testing.T) { f(t, newMemTest(t, cacheSize)) })
	t.Run("minio", func(t *testing.T) { f(t, newMinIOTest(t, cacheSize, 0)) })
}

func newMemTest(t *testing.T, cacheSize int64) remoteTest {
	t.Helper()
	m := memstore.New(objstore.Config{Bucket: "mem"})
	var n atomic.Int64
	m.SetHook(func(context.Context, *memstore.Call) error { n.Add(1); return nil })
	rt := remoteTest{b: m, mem: m, requests: n.Load,
		cfg: Config{Config: objstore.Config{Endpoint: "http://memstore.invalid", Bucket: "mem"}, CacheSize: cacheSize}}
	s, err := rt.create(context.Background(), filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rt.s = s
	return rt
}

// newMinIOTest is a remote store on a fresh bucket of MinIO, reached
// through a proxy that delays each request by delay.
func newMinIOTest(t *testing.T, cacheSize int64, delay time.Duration) remoteTest {
	t.Helper()
	srv := miniotest.Start(t)
	p := miniotest.NewProxy(t, srv.Endpoint, delay)
	rt := remoteTest{requests: p.Requests, proxy: p,
		cfg: Config{Config: srv.ProxyConfig(p, srv.NewBucket(t)), CacheSize: cacheSize}}
	rt.cfg.CredentialsFile = writeCreds(t, srv.Credentials())
	s, err := rt.create(context.Background(), filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b, err := objstore.Open(context.Background(), srv.Config(rt.cfg.Bucket), srv.Credentials(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt.s, rt.b = s, b
	return rt
}

func writeCreds(t testing.TB, c objstore.Credentials) string {
	name := filepath.Join(t.TempDir(), "creds")
	data := fmt.Sprintf("AWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\n", c.AccessKey, c.SecretKey)
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}
