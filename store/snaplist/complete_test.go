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
