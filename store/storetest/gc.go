package storetest

import (
	"context"
	"testing"

	"github.com/cairnfs/cairn/store"
)

// CollectUnmarked runs a GC of s through its ChunkCollector with nothing
// marked by the caller (every chunk that its age and the collector's own
// marks do not keep is garbage) and an atime cutoff of 0: the harshest
// GC, for the tests of what keeps a running writer's chunks.
func CollectUnmarked(t testing.TB, s *store.Store) store.SweepCounts {
	t.Helper()
	c, _ := BeginUnmarked(t, s)
	defer c.Close()
	n, err := c.Sweep(context.Background(), store.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// BeginUnmarked is CollectUnmarked up to its sweep: the collector has
// begun (its start returned) and ended a mark of nothing; the caller
// sweeps and closes it.
func BeginUnmarked(t testing.TB, s *store.Store) (store.ChunkCollector, store.GCStart) {
	t.Helper()
	ctx := context.Background()
	c := s.ChunkCollector()
	st, err := c.Begin(ctx, 0)
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	if err := c.EndMark(ctx); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c, st
}
