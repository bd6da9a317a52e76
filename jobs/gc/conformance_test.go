package gc

import (
	"context"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/store/storetest/conformance"
)

// collectAll is a GC removing every chunk no snapshot references.
func collectAll(t *testing.T, s *store.Store) {
	t.Helper()
	if _, err := Run(context.Background(), s, Options{AtimeCutoff: 0}); err != nil {
		t.Fatal(err)
	}
}

// The conformance suite's last lifecycle step, a GC after a forget, on
// each kind of store: a local directory, a bucket in memory (memstore),
// a real MinIO.
func TestConformanceGCLocal(t *testing.T) {
	conformance.RunGCSuite(t, storetest.NewStore, collectAll)
}

// collectBucket is collectAll on a bucket, whose times (LastModified, a
// lease's start) have whole seconds: a chunk uploaded in the second the
// GC starts is not older than its cutoff and rightly stays (pending), so
// the GC starts in the next second, as remote_test.go's do.
func collectBucket(t *testing.T, s *store.Store) {
	secondTick()
	collectAll(t, s)
}

func TestConformanceGCMem(t *testing.T) {
	conformance.RunGCSuite(t, func(t testing.TB) *store.Store {
		s, _ := storetest.NewMemStore(t)
		return s
	}, collectBucket)
}

func TestConformanceGCRemote(t *testing.T) {
	conformance.RunGCSuite(t, storetest.NewRemoteStore, collectBucket)
}
