package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
)

// A Bucket is one bucket that several hosts (store directories) share,
// for the tests of the bucket's rules (docs/design/store.md): in memory
// (memstore: its clock and its hook are the test's) or on MinIO (real
// HTTP, real clocks).
type Bucket struct {
	// Objects is a handle of the test's own on the bucket, to act behind
	// the stores' backs.
	objstore.Objects
	// Mem is the in-memory bucket; nil on MinIO.
	Mem *memstore.Bucket
	cfg store.RemoteConfig // MinIO's
}

// NewMemBucket is a fresh in-memory bucket.
func NewMemBucket() *Bucket {
	m := memstore.New(objstore.Config{Bucket: "mem"})
	return &Bucket{Objects: m, Mem: m}
}

// NewMinIOBucket is a fresh bucket of the test process's MinIO server
// (the test skips without a MinIO binary unless
// CAIRN_TEST_REQUIRE_MINIO=1).
func NewMinIOBucket(t testing.TB) *Bucket {
	t.Helper()
	srv := miniotest.Start(t)
	cfg := store.RemoteConfig{Config: srv.Config(srv.NewBucket(t))}
	cfg.CredentialsFile = CredentialsFile(t, srv)
	o, err := objstore.Open(context.Background(), cfg.Config, srv.Credentials(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Bucket{Objects: o, cfg: cfg}
}

// EachBucket runs f on an in-memory bucket ("mem") and on a bucket of
// MinIO ("minio"), each a subtest.
func EachBucket(t *testing.T, f func(t *testing.T, b *Bucket)) {
	t.Run("mem", func(t *testing.T) { f(t, NewMemBucket()) })
	t.Run("minio", func(t *testing.T) { f(t, NewMinIOBucket(t)) })
}

// Attach is a new host on the bucket: a store directory of the test's
// own (creating the store in the bucket, or attaching to it).
func (b *Bucket) Attach(t testing.TB) *store.Store {
	t.Helper()
	if b.Mem != nil {
		return AttachMemStore(t, b.Mem)
	}
	return AttachRemoteStore(t, b.cfg)
}

// Hosts are n hosts on the bucket.
func (b *Bucket) Hosts(t testing.TB, n int) []*store.Store {
	t.Helper()
	hosts := make([]*store.Store, n)
	for i := range hosts {
		hosts[i] = b.Attach(t)
	}
	return hosts
}

// Pass lets d go by: the in-memory bucket's clock moves on (LastModified,
// the server's time, and the lease renewals it reaches, which are handed
// over before Pass returns: memstore.Bucket.Advance); on MinIO the test
// sleeps.
func (b *Bucket) Pass(d time.Duration) {
	if b.Mem != nil {
		b.Mem.Advance(d)
		return
	}
	time.Sleep(d)
}

// Has tells whether the bucket holds key (a HEAD on MinIO).
func (b *Bucket) Has(t testing.TB, key string) bool {
	t.Helper()
	if b.Mem != nil {
		return b.Mem.Has(key)
	}
	_, err := b.Head(context.Background(), key)
	if err != nil && !errors.Is(err, objstore.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// Count is how many objects the bucket lists under prefix.
func (b *Bucket) Count(t testing.TB, prefix string) int {
	t.Helper()
	n := 0
	for _, err := range b.List(context.Background(), prefix, "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}
