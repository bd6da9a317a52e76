package storesync

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestSyncCopiesThenSkipsAndDedups copies a namespace tree, then finds
// nothing to do, then copies one new snapshot moving only its new chunks.
func TestSyncCopiesThenSkipsAndDedups(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 3)
	cts := backups(t, a, ct2, 2)
	// the source's verify state stays behind; notes (unprotected) and
	// fields this version does not know travel with the manifest
	err := a.UpdateManifest(context.Background(), snaps[1], func(m *store.Manifest) error {
		m.SetVerifyState(store.VerifyState{State: "ok", UPID: "UPID:x"})
		m.Unprotected["notes"] = json.RawMessage(`"keep me"`)
		m.Extra = map[string]json.RawMessage{"key-fingerprint": json.RawMessage(`"ab:cd"`)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := mustRun(t, a, b, Options{})
	if rep.SnapshotsCopied != 5 || rep.SnapshotsSkipped != 0 || rep.ChunksCopied == 0 {
		t.Fatalf("first sync: %+v", rep)
	}
	for _, s := range append(snaps, cts...) {
		sameSnapshot(t, a, b, s)
	}
	m, _ := b.ReadManifest(snaps[1])
	if _, ok := m.VerifyState(); ok || string(m.Unprotected["notes"]) != `"keep me"` || string(m.Extra["key-fingerprint"]) != `"ab:cd"` {
		t.Fatalf("copied manifest: %+v", m)
	}
	// 16 chunks, then one new chunk per snapshot (the first snapshot of
	// a group has no base: its chunks are looked up, none found)
	if want := int64(16 + 2 + 16 + 1); rep.ChunksCopied != want {
		t.Fatalf("chunks copied %d, want %d (%+v)", rep.ChunksCopied, want, rep)
	}

	again := mustRun(t, a, b, Options{})
	if again.SnapshotsCopied != 0 || again.SnapshotsSkipped != 5 || again.ChunksCopied != 0 || again.BytesCopied != 0 {
		t.Fatalf("second sync copied something: %+v", again)
	}

	next := storetest.BackupImage(t, a, vm1, t0.Add(3*60*60e9), storetest.Image{Data: imageAt(vm1.String(), 3), ChunkSize: chunkSize})
	third := mustRun(t, a, b, Options{Group: &vm1})
	if third.SnapshotsCopied != 1 || third.ChunksCopied != 1 || third.ChunksReused != 15 {
		t.Fatalf("third sync: %+v", third)
	}
	sameSnapshot(t, a, b, next)
}

// TestSyncOnlyNewerThanTargetNewest: as PBS, a snapshot older than the
// target group's newest is not added.
func TestSyncOnlyNewerThanTargetNewest(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 3)
	storetest.BackupImage(t, b, vm1, snaps[1].Time.Add(60e9), storetest.Image{Data: imageAt("x", 0), ChunkSize: chunkSize})
	rep := mustRun(t, a, b, Options{})
	if rep.SnapshotsCopied != 1 || rep.SnapshotsSkipped != 2 || rep.Snapshots[0].Outcome != Older || rep.Snapshots[2].Outcome != Copied {
		t.Fatalf("%+v", rep)
	}
	if got := finished(t, b, vm1); len(got) != 2 || !got[1].Time.Equal(snaps[2].Time) {
		t.Fatalf("target has %v", got)
	}
}

// TestSyncSelection: one snapshot (by time and latest), one group, one
// namespace.
func TestSyncSelection(t *testing.T) {
	a := storetest.NewStore(t)
	snaps := backups(t, a, vm1, 2)
	backups(t, a, ct2, 1)
	b := storetest.NewStore(t)
	r := store.Ref{Snapshot: snaps[0]}
	if rep := mustRun(t, a, b, Options{Snapshot: &r}); rep.SnapshotsCopied != 1 {
		t.Fatalf("%+v", rep)
	}
	latest := store.Ref{Snapshot: store.Snapshot{Group: vm1}, Latest: true}
	if rep := mustRun(t, a, b, Options{Snapshot: &latest}); rep.SnapshotsCopied != 1 || rep.Snapshots[0].Snapshot != snaps[1].String() {
		t.Fatalf("%+v", rep)
	}
	if got := finished(t, b, ct2); len(got) != 0 {
		t.Fatalf("ct2 copied: %v", got)
	}
	if rep := mustRun(t, a, b, Options{NS: "prod"}); rep.SnapshotsCopied != 1 {
		t.Fatalf("%+v", rep)
	}
	if _, _, err := run(t, a, b, Options{NS: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing namespace: %v", err)
	}
	g := store.Group{Type: store.TypeVM, ID: "404"}
	if _, _, err := run(t, a, b, Options{Group: &g}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing group: %v", err)
	}
}

// TestSyncRefusesSameStore: a store is not synced into itself.
func TestSyncRefusesSameStore(t *testing.T) {
	a := storetest.NewStore(t)
	again, err := store.Open(a.Root() + "/.")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(a, again, Options{}, nil); !errors.Is(err, ErrSameStore) {
		t.Fatalf("same store: %v", err)
	}
}

// TestSyncReplacesLeftover: an unfinished snapshot a copy cut short left
// in the target (kill -9) is removed and the snapshot copied again.
func TestSyncReplacesLeftover(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 1)
	dir := b.SnapshotPath(snaps[0])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "disk.img.fidx"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := mustRun(t, a, b, Options{}); rep.SnapshotsCopied != 1 {
		t.Fatalf("%+v", rep)
	}
	sameSnapshot(t, a, b, snaps[0])
}

// TestSyncCancelled: a sync cancelled midway (here: as the second
// snapshot is about to get its manifest) leaves the first snapshot
// finished and nothing of the second.
func TestSyncCancelled(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 3)
	cancelBeforeManifest(t, a, b, snaps[1])
	got := finished(t, b, vm1) // fails on an unfinished snapshot left
	if len(got) != 1 || got[0] != snaps[0] {
		t.Fatalf("target has %v", got)
	}
	if rep := mustRun(t, a, b, Options{}); rep.SnapshotsCopied != 2 {
		t.Fatalf("sync after cancel: %+v", rep)
	}
}

// TestSyncCancelledInChunks: cancelled while chunks are copied (a
// context already done), the copy ends at once with nothing left.
func TestSyncCancelledInChunks(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	backups(t, a, vm1, 2)
	ctx, cancel := context.WithCancel(context.Background())
	sy, err := New(a, b, Options{Workers: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obs := &cancelAfter{n: 3, cancel: cancel}
	sy.obs = obs
	if err := sy.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sync: %v", err)
	}
	if got := finished(t, b, vm1); len(got) != 0 {
		t.Fatalf("target has %v", got)
	}
}

// cancelAfter cancels once n chunks were copied.
type cancelAfter struct {
	recorder
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) AddDone(_, bytes int64) {
	if bytes > 0 {
		if c.n--; c.n == 0 {
			c.cancel()
		}
	}
}
