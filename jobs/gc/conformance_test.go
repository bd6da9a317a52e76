package gc_test

import (
	"context"
	"testing"

	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/store/storetest/conformance"
)

// collectAll is a GC removing every chunk no snapshot references.
func collectAll(t *testing.T, s *store.Store) {
	t.Helper()
	if _, err := gc.Run(context.Background(), s, gc.Options{AtimeCutoff: 0}); err != nil {
		t.Fatal(err)
	}
}

// The conformance suite's last lifecycle step, a GC after a forget, on
// each kind of store: a local directory, a bucket in memory (memstore),
// a real MinIO.
func TestConformanceGCLocal(t *testing.T) {
	conformance.RunGCSuite(t, storetest.NewStore, collectAll)
}

func TestConformanceGCMem(t *testing.T) {
	conformance.RunGCSuite(t, func(t testing.TB) *store.Store {
		s, _ := storetest.NewMemStore(t)
		return s
	}, collectAll)
}

func TestConformanceGCRemote(t *testing.T) {
	conformance.RunGCSuite(t, storetest.NewRemoteStore, collectAll)
}
