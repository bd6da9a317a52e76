package store

import (
	"context"
	"testing"
	"time"
)

// trustedOf lists g for a mount and says which snapshots the index
// vouched for (no stat).
func trustedOf(t *testing.T, s *Store, x *ListingIndex, g Group) (map[string]bool, []MountSnapshot) {
	t.Helper()
	ms, err := s.MountSnapshots(x, g)
	mustOK(t, err)
	out := map[string]bool{}
	for _, m := range ms {
		if !m.Finished {
			t.Fatalf("%s: not finished", m.Snapshot)
		}
		out[m.TimeString()] = m.Stamp.trusted
	}
	return out, ms
}

// TestMountSnapshotsGroupKey: a mount's group listing takes a snapshot
// from the index, with no stat, only while the group's directory is in
// the (settled) state the entry recorded and the snapshot's directory
// has the recorded d_ino; a rewritten manifest (notes) does not matter,
// a forget in the group does, and an unsettled group is not recorded.
func TestMountSnapshotsGroupKey(t *testing.T) {
	settleNow(t)
	s := testStore(t)
	g := Group{Type: TypeVM, ID: "100"}
	path, _ := makeImage(t, t.TempDir(), 1)
	a, _ := backupImage(t, s, g, day(1), path)
	b, _ := backupImage(t, s, g, day(2), path)
	x := s.OpenListingIndex(nil)
	list := func() map[string]bool {
		tr, ms := trustedOf(t, s, x, g)
		for _, m := range ms {
			if l, stamp := x.Listing(m.Snapshot, m.Stamp); l == nil {
				mm, listing := listingOf(t, s, m.Snapshot)
				x.PutListing(m.Snapshot, stamp, mm, listing)
			}
		}
		return tr
	}
	want := func(what string, got map[string]bool, ta, tb bool) {
		t.Helper()
		if got[a.TimeString()] != ta || got[b.TimeString()] != tb {
			t.Fatalf("%s: trusted %v, want a %v b %v", what, got, ta, tb)
		}
	}
	want("first", list(), false, false)
	want("second", list(), true, true)
	setNotes(t, s, a, "changed")
	want("notes", list(), true, true)
	if l, _ := x.Listing(a, ManifestStamp{}); l != nil {
		t.Fatal("a stat'ed listing of a rewritten manifest came from the index")
	}

	x.mu.Lock() // a forged d_ino
	e := x.entries[b.String()]
	e.Dir++
	x.entries[b.String()] = e
	x.mu.Unlock()
	want("forged d_ino", list(), true, false)
	want("recorded again", list(), true, true)

	mustOK(t, s.ForgetSnapshot(context.Background(), b))
	snapIndexSettle = time.Hour // the group's new state is not recorded
	tr, _ := trustedOf(t, s, x, g)
	if len(tr) != 1 || tr[a.TimeString()] {
		t.Fatalf("after a forget: %v, want a alone, stat'ed", tr)
	}
	list()
	if tr, _ := trustedOf(t, s, x, g); tr[a.TimeString()] {
		t.Fatal("an unsettled group's state was recorded")
	}
	snapIndexSettle = 0
	list() // a's rewritten manifest is read again, the group's state recorded
	if tr, _ := trustedOf(t, s, x, g); !tr[a.TimeString()] {
		t.Fatal("a settled group's state was not recorded")
	}
	c, _ := backupImage(t, s, g, day(3), path)
	trustedOf(t, s, x, g) // records the new state: a live mount lists a no more
	if tr, _ := trustedOf(t, s, x, g); !tr[a.TimeString()] || tr[c.TimeString()] {
		t.Fatalf("after a backup: trusted %v, want a alone (by the group's listing)", tr)
	}
}
