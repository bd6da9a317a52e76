package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore/memstore"
	"github.com/cairnfs/cairn/store/storetest"
)

// Interleavings of the bucket's rules (docs/design/store.md) that only
// the in-memory bucket can force: a pause point between two calls, a
// clock the test moves, a listing that lags.

// Rule 4: a GC whose lease is lost during its sweep (here its object is
// deleted and the next renewal finds it gone, just before the first
// delete request) deletes nothing more: once its lease is lost, another
// GC may run and writers may stop waiting for this one.
func TestRemoteGCStopsWhenLeaseLost(t *testing.T) {
	ctx := context.Background()
	bk := storetest.NewMemBucket()
	s, ds, _ := remoteGCStore(t, bk)
	c, _ := storetest.BeginUnmarked(t, s)
	defer c.Close()
	store.SetGCBeforeDelete(func([]string) {
		if err := bk.Delete(ctx, store.GCLeaseKey); err != nil {
			t.Error(err)
		}
		bk.Pass(store.GCLeaseTTL / 5) // a renewal, which finds the lease gone
		select {
		case <-store.GCLeaseLost(c):
		case <-time.After(30 * time.Second):
			t.Error("the GC lease was not lost after its object was deleted")
		}
	})
	defer store.SetGCBeforeDelete(nil)
	n, err := c.Sweep(ctx, store.SweepOptions{})
	if !errors.Is(err, store.ErrGCLeaseLost) {
		t.Fatalf("sweep after the GC lease was lost: %v (removed %d), want ErrGCLeaseLost", err, n.RemovedChunks)
	}
	for _, d := range ds {
		if !bk.Has(t, store.ChunkKey(d)) {
			t.Errorf("chunk %s deleted by a GC that had lost its lease", d)
		}
	}
}

// Rule 5: two hosts update one manifest at once (host 1's write waits
// at a pause point while host 2's update goes through): the later write
// finds the manifest changed (If-Match), reads it again and keeps the
// other's change; no update is lost.
func TestRemoteManifestUpdateRace(t *testing.T) {
	ctx := context.Background()
	bk := storetest.NewMemBucket()
	h1, h2 := bk.Attach(t), bk.Attach(t)
	a := backupAt(t, h1, vm1, 1)
	refresh(t, h2)
	note := func(name string) func(m *store.Manifest) error {
		return func(m *store.Manifest) error {
			if m.Unprotected == nil {
				m.Unprotected = map[string]json.RawMessage{}
			}
			m.Unprotected[name] = json.RawMessage(`true`)
			return nil
		}
	}
	key := snapKey(a, store.ManifestName)
	p := storetest.PauseAt(bk.Mem, func(c *memstore.Call) bool { return c.Op == memstore.OpPut && c.Key == key })
	defer bk.Mem.SetHook(nil)
	done := make(chan error, 1)
	go func() { done <- h1.UpdateManifest(ctx, a, note("one")) }()
	<-p.Reached() // host 1 read the manifest and is about to put it back
	if err := h2.UpdateManifest(ctx, a, note("two")); err != nil {
		t.Fatal(err)
	}
	p.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	refresh(t, h2)
	m, err := h2.ReadManifest(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two"} {
		if _, ok := m.Unprotected[name]; !ok {
			t.Errorf("the update %q is lost: %s", name, strings.Join(keysOf(m.Unprotected), ", "))
		}
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Rule 5, the mirror: a listing that lags leaves a finished snapshot
// out; the refresh does not remove its local copy, since a HEAD finds
// its manifest still in the bucket.
func TestRemoteRefreshListingLags(t *testing.T) {
	bk := storetest.NewMemBucket()
	h1, h2 := bk.Attach(t), bk.Attach(t)
	a := backupAt(t, h1, vm1, 1)
	backupAt(t, h1, vm1, 2) // the group is listed all the same
	refresh(t, h2)
	hidden := a.String() + "/"
	bk.Mem.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpListKey && strings.HasPrefix(c.Key, hidden) {
			c.Lie = memstore.LieOmit
		}
		return nil
	})
	defer bk.Mem.SetHook(nil)
	refresh(t, h2)
	if !finished(t, h2, a) {
		t.Fatalf("a refresh whose listing left %s out removed it, though its manifest is in the bucket", a)
	}
}
