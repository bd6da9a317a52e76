package objstore_test

import (
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
)

// hosts are two clients of one bucket (two hosts) and the way to let
// their time go by.
type hosts struct {
	a, b objstore.Objects
	mem  *memstore.Bucket // the in-memory bucket; nil on MinIO
}

// pass lets d go by for the hosts: the in-memory bucket's clock moves on
// (the lease renewals it reaches are handed over: objstore.LeaseClock);
// on MinIO the test sleeps.
func (h hosts) pass(d time.Duration) {
	if h.mem != nil {
		h.mem.Advance(d)
		return
	}
	time.Sleep(d)
}

// eachBucket runs f on an in-memory bucket and on a bucket of MinIO
// (which skips without a MinIO binary).
func eachBucket(t *testing.T, f func(t *testing.T, h hosts)) {
	t.Run("mem", func(t *testing.T) {
		m := memstore.New(objstore.Config{Bucket: "mem"})
		f(t, hosts{a: m, b: m, mem: m})
	})
	t.Run("minio", func(t *testing.T) {
		a, srv, cfg := open(t)
		f(t, hosts{a: a, b: reopen(t, srv, cfg, objstore.Options{})})
	})
}

// waitLost waits for l's Lost; a lease that is never lost fails the test
// after a minute.
func waitLost(t *testing.T, l *objstore.Lease, what string) {
	t.Helper()
	select {
	case <-l.Lost():
	case <-time.After(time.Minute):
		t.Fatalf("lease not lost after %s", what)
	}
}
