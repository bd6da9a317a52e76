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
	ctx := context.Background()
	c := s.ChunkCollector()
	defer c.Close()
	if _, err := c.Begin(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.EndMark(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := c.Sweep(ctx, store.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}
