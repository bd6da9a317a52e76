package storesync

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// overlapHook is a beforeFinish that holds the first snapshot to reach
// its finish until a snapshot of another group has copied its chunks and
// indexes (reached its own finish): the next snapshot's uploads run
// while one finishes. then runs once both are there.
func overlapHook(t *testing.T, then func()) func(store.Snapshot) {
	var mu sync.Mutex
	var first *store.Group
	other := make(chan struct{})
	arrived := other
	return func(s store.Snapshot) {
		mu.Lock()
		switch {
		case first == nil:
			first = &s.Group
			mu.Unlock()
			select {
			case <-arrived:
			case <-time.After(time.Minute): // a guard against a hang, not a measure
				t.Error("no other group's snapshot copied its chunks while one finished")
			}
			return
		case *first != s.Group && other != nil:
			close(other)
			other = nil
			if then != nil {
				then()
			}
		}
		mu.Unlock()
	}
}

// TestSyncOverlap: into a bucket, one group's snapshot finishes while the
// next group's copies its chunks; every snapshot arrives whole, each
// group's oldest first.
func TestSyncOverlap(t *testing.T) {
	a := storetest.NewStore(t)
	r, _ := storetest.NewMemStore(t)
	snaps := append(backups(t, a, vm1, 2), backups(t, a, ct2, 2)...)
	var obs recorder
	sy, err := New(a, r, Options{}, &obs)
	if err != nil {
		t.Fatal(err)
	}
	sy.beforeFinish = overlapHook(t, nil)
	if err := sy.Run(context.Background()); err != nil || len(obs.errs) > 0 {
		t.Fatalf("sync: %v %q", err, obs.errs)
	}
	if rep := sy.Report(); rep.SnapshotsCopied != 4 {
		t.Fatalf("%+v", rep)
	}
	for _, s := range snaps {
		sameSnapshot(t, a, r, s)
	}
	for _, g := range []store.Group{vm1, ct2} {
		if got := finished(t, r, g); len(got) != 2 {
			t.Fatalf("group %s: %v", g, got)
		}
	}
}

// TestSyncOverlapCancelled: a sync cancelled while one snapshot
// finishes and another group's is copied leaves neither complete-looking.
func TestSyncOverlapCancelled(t *testing.T) {
	a := storetest.NewStore(t)
	r, _ := storetest.NewMemStore(t)
	backups(t, a, vm1, 1)
	backups(t, a, ct2, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sy, err := New(a, r, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sy.beforeFinish = overlapHook(t, cancel)
	if err := sy.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sync: %v", err)
	}
	for _, g := range []store.Group{vm1, ct2} {
		if got := finished(t, r, g); len(got) != 0 {
			t.Fatalf("group %s: %v finished after the cancel", g, got)
		}
	}
}
