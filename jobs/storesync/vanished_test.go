package storesync

import (
	"context"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestRemoveVanishedHonoursProtection: snapshots gone from the source
// are removed from the target, but a protected one stays; a group only
// the target has goes too in namespace mode.
func TestRemoveVanishedHonoursProtection(t *testing.T) {
	ctx := context.Background()
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 4)
	only := backups(t, b, store.Group{Type: store.TypeHost, ID: "gone"}, 1)
	mustRun(t, a, b, Options{})
	for _, s := range snaps[:2] {
		if err := a.ForgetSnapshot(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.SetProtected(ctx, snaps[0], true); err != nil {
		t.Fatal(err)
	}
	// without the option nothing is removed
	if rep := mustRun(t, a, b, Options{}); rep.SnapshotsRemoved != 0 || len(finished(t, b, vm1)) != 4 {
		t.Fatalf("%+v", rep)
	}
	rep := mustRun(t, a, b, Options{RemoveVanished: true})
	if rep.SnapshotsRemoved != 2 || rep.SnapshotsKept != 1 {
		t.Fatalf("%+v", rep)
	}
	got := finished(t, b, vm1)
	if len(got) != 3 || got[0] != snaps[0] || got[1] != snaps[2] {
		t.Fatalf("target keeps %v", got)
	}
	if got := finished(t, b, only[0].Group); len(got) != 0 {
		t.Fatalf("group only the target had: %v", got)
	}
}

// TestRemoveVanishedNeedsTheSource: a group or namespace the source does
// not have is an error, and nothing is removed from the target.
func TestRemoveVanishedNeedsTheSource(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	backups(t, a, vm1, 1)
	backups(t, b, ct2, 2)
	if _, _, err := run(t, a, b, Options{Group: &ct2, RemoveVanished: true}); err == nil {
		t.Fatal("a group the source lacks was synced")
	}
	if _, _, err := run(t, a, b, Options{NS: "prod", RemoveVanished: true}); err == nil {
		t.Fatal("a namespace the source lacks was synced")
	}
	if got := finished(t, b, ct2); len(got) != 2 {
		t.Fatalf("target lost snapshots: %v", got)
	}
	r := store.Ref{Snapshot: store.Snapshot{Group: vm1}, Latest: true}
	if err := (Options{Snapshot: &r, RemoveVanished: true}).Check(); err == nil {
		t.Fatal("remove-vanished with one snapshot accepted")
	}
}
