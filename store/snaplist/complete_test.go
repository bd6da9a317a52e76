package snaplist_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/snaplist"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestCompleteRefs: groups are named relative to the namespace, with a
// slash when snapshots are wanted; a group and a slash bring its
// snapshots' times and "latest".
func TestCompleteRefs(t *testing.T) {
	s := storetest.NewStore(t)
	at := time.Unix(1.7e9, 0)
	storetest.BackupImage(t, s, store.Group{Type: "vm", ID: "1"}, at, storetest.Image{Data: storetest.RandBytes("c", 1<<16)})
	for _, c := range []struct {
		toComplete string
		snapshots  bool
		want       string
	}{
		{"", false, "vm/1"},
		{"", true, "vm/1/"},
		{"vm/1/", true, "vm/1/latest vm/1/" + store.Snapshot{Time: at}.TimeString()},
	} {
		got, err := snaplist.CompleteRefs(s, "", c.toComplete, c.snapshots)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%q (snapshots %v): %q, %v; want %q", c.toComplete, c.snapshots, got, err, c.want)
		}
	}
	if _, err := snaplist.CompleteRefs(s, "../x", "", false); err == nil {
		t.Error("a bad namespace completes")
	}
}

// TestFilterPrefix: the names with the prefix, in order, bounded.
func TestFilterPrefix(t *testing.T) {
	if got := snaplist.FilterPrefix([]string{"vm/1", "ct/2", "vm/3"}, "vm/"); strings.Join(got, " ") != "vm/1 vm/3" {
		t.Errorf("%q", got)
	}
	if got := snaplist.FilterPrefix(make([]string, 6000), ""); len(got) != 5000 {
		t.Errorf("%d names, want at most 5000", len(got))
	}
}
