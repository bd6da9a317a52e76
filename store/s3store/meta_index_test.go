package s3store_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

// groupTimes is a group directory's inode, mtime and ctime: what the
// snapshot index checks before it vouches for the group's snapshots.
func groupTimes(t *testing.T, s *store.Store, g store.Group) [3]int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(s.GroupPath(g), &st); err != nil {
		t.Fatal(err)
	}
	return [3]int64{int64(st.Ino), st.Mtim.Nano(), st.Ctim.Nano()}
}

// A refresh that replaces a manifest the mirror had (another host
// changed it in the bucket) changes the group directory's times, as
// adding or removing a snapshot does, so that the snapshot index looks
// at the group again; a refresh that finds nothing new leaves them.
func TestRemoteRefreshManifestChangeTouchesGroup(t *testing.T) {
	a, b := twoHosts(t)
	ctx := context.Background()
	snap := backupAt(t, a, vm1, 1)
	refresh(t, b)
	if !finished(t, b, snap) {
		t.Fatal("host 2 does not mirror host 1's snapshot")
	}
	before := groupTimes(t, b, vm1)
	refresh(t, b)
	if got := groupTimes(t, b, vm1); got != before {
		t.Fatalf("a refresh with nothing new changed the group's directory: %v, was %v", got, before)
	}
	if err := a.UpdateManifest(ctx, snap, func(m *store.Manifest) error {
		if m.Unprotected == nil {
			m.Unprotected = map[string]json.RawMessage{}
		}
		m.Unprotected["notes"] = json.RawMessage(`"changed elsewhere"`)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	refresh(t, b)
	if got := groupTimes(t, b, vm1); got == before {
		t.Fatal("the refresh replaced the manifest and left the group's directory as it was")
	}
	if _, err := os.Stat(b.SnapshotPath(snap)); err != nil {
		t.Fatal(err)
	}
}
