package verify

import (
	"os"
	"testing"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// TestVerifyOnlyUnfinished: a selection of unfinished snapshots only (by
// namespace, by time, by group) is nothing to verify, not a failure; a
// finished one beside them is verified and the flag is off.
func TestVerifyOnlyUnfinished(t *testing.T) {
	s := testStore(t)
	g := store.Group{NS: "unfinished", Type: store.TypeVM, ID: "1"}
	snap := store.Snapshot{Group: g, Time: t0}
	if err := os.MkdirAll(s.SnapshotPath(snap), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []map[string]string{{"ns": "unfinished"}, {"snapshots": snap.String()}, {"snapshots": g.String()}} {
		st, rep, _ := runVerify(t, s, p)
		if st.State != jobs.StateOK || !rep.NothingToVerify || rep.SnapshotsUnfinished != 1 || len(st.Errors) != 0 {
			t.Errorf("verify %v: %s %+v %v", p, st.State, rep, st.Errors)
		}
	}
	backupImage(t, s, store.Group{NS: "unfinished", Type: store.TypeVM, ID: "2"}, t0, randBytes("unfinished", testChunk))
	st, rep, _ := runVerify(t, s, map[string]string{"ns": "unfinished"})
	if st.State != jobs.StateOK || rep.NothingToVerify || rep.SnapshotsOK != 1 || rep.SnapshotsUnfinished != 1 {
		t.Errorf("verify beside a finished one: %s %+v", st.State, rep)
	}
	st, rep, _ = runVerify(t, s, map[string]string{"snapshots": "vm/404"})
	if st.State == jobs.StateOK || rep.NothingToVerify {
		t.Errorf("verify of a missing group: %s %+v", st.State, rep)
	}
}
