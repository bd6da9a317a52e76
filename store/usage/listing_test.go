package usage

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

// TestListing: the snapshots show selects and their groups are kept,
// the store's figures are the whole store's, and the text has a line a
// group, a row a snapshot (marked when unfinished or in error), the
// store's line and the errors escaped.
func TestListing(t *testing.T) {
	g1, g2 := store.Group{Type: "host", ID: "a"}, store.Group{Type: "host", ID: "b"}
	u := func(total, unique int64) Usage {
		return Usage{Total: Bytes{Chunks: 2, Logical: total, Stored: total / 2}, Unique: Bytes{Chunks: 1, Logical: unique, Stored: unique / 2},
			Files: 1, FileBytes: 100}
	}
	snap := func(g store.Group, sec int64, finished bool) store.SnapshotInfo {
		return store.SnapshotInfo{Snapshot: store.Snapshot{Group: g, Time: time.Unix(sec, 0)}, Finished: finished}
	}
	rep := &Report{StoredKnown: true, Missing: 3, All: u(4<<20, 1<<20), Errors: []error{errors.New("bad \x1b index")},
		Snapshots: []Snapshot{{SnapshotInfo: snap(g1, 1e9, true), Usage: u(2<<20, 1<<20)},
			{SnapshotInfo: snap(g1, 2e9, false), Usage: u(2<<20, 0), Err: errors.New("x")},
			{SnapshotInfo: snap(g2, 1e9, true), Usage: u(1<<20, 1<<20)}},
		Groups: []Group{{Group: g1, Snapshots: 2, Usage: u(3<<20, 1<<20)}, {Group: g2, Snapshots: 1, Usage: u(1<<20, 1<<20)}}}
	l := ListingOf(rep, func(si store.SnapshotInfo) bool { return si.Group == g1 })
	if len(l.Snapshots) != 2 || len(l.Groups) != 1 || l.Store.Snapshots != 3 || l.Store.MissingChunks != 3 ||
		l.Snapshots[1].Error != "x" || l.Groups[0].Shared.Logical != 2<<20 || l.Groups[0].Freed != 1<<19+100 {
		t.Fatalf("listing %+v", l)
	}
	var b bytes.Buffer
	if err := l.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"group host/a: 2 snapshot(s), total 1.5 MiB, unique 512 KiB, shared 1.0 MiB (logical 3.0 MiB, unique 1.0 MiB), files 100 B",
		"SNAPSHOT", "(unfinished) (ERROR: see below)", "store: 3 snapshot(s), 2 chunk(s), total 2.0 MiB", ", 3 chunk(s) missing",
		"errors:\n  bad \\x1b index"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	l.StoredKnown = false
	if err := l.WriteText(&b, true); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "sizes are logical") || strings.Contains(b.String(), "SNAPSHOT") {
		t.Errorf("groups only, logical sizes:\n%s", b.String())
	}
}
