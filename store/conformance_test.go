package store_test

import (
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/store/storetest/conformance"
)

// TestConformanceLocal runs the storage conformance suite on a local
// store.
func TestConformanceLocal(t *testing.T) {
	t.Parallel() // the suites' file archive tests wait 2 s for the tree to settle: at once
	conformance.RunBackendSuite(t, storetest.NewStore)
	conformance.RunLifecycleSuite(t, storetest.NewStore) // its GC: jobs/gc's TestConformanceGC*
}

// TestConformanceRemote runs the same suite on a remote store, on a
// fresh bucket of a real MinIO server per test.
func TestConformanceRemote(t *testing.T) {
	t.Parallel() // the suites' file archive tests wait 2 s for the tree to settle: at once
	conformance.RunBackendSuite(t, storetest.NewRemoteStore)
	conformance.RunLifecycleSuite(t, storetest.NewRemoteStore)
}

// TestConformanceMem runs the suite on a remote store on an in-memory
// bucket (memstore): the same store code, no server.
func TestConformanceMem(t *testing.T) {
	t.Parallel() // the suites' file archive tests wait 2 s for the tree to settle: at once
	mem := func(t testing.TB) *store.Store {
		s, _ := storetest.NewMemStore(t)
		return s
	}
	conformance.RunBackendSuite(t, mem)
	conformance.RunLifecycleSuite(t, mem)
}
