package fs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

// TestCachedListings: a second listing of what a snapshot holds (its
// archives, a directory of a file archive) comes from the kernel's page
// cache and makes no Readdir; a group's snapshot list is not cached, so
// a new snapshot appears.
func TestCachedListings(t *testing.T) {
	needFUSE(t)
	// a fixture of its own (it adds a snapshot), beside the shared one on
	// a tmpfs: store.Create makes 65,536 directories, which on a loaded
	// disk took minutes to make and remove
	dir, err := os.MkdirTemp(tmpRoot, "cachedir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f, err := buildFixture(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	refresh := 50 * time.Millisecond
	_, mnt, _ := mountT(t, Options{Store: f.s, Trees: fakeOpener{}, Refresh: refresh})
	list := func(rel string) []string { t.Helper(); return readNames(t, filepath.Join(mnt, rel)) }
	snapDir := "vm/101/2024-01-01T00:00:00Z"
	for _, rel := range []string{snapDir, snapDir + "/root.pxar", snapDir + "/root.pxar/etc"} {
		first := list(rel)
		// Listed again, from the kernel's cache (kernelCached: while no
		// one drops caches).
		n := kernelCached(t, func() int64 {
			before := readdirs.Load()
			if again := list(rel); !slices.Equal(again, first) {
				t.Errorf("%s: listing again %q, first %q", rel, again, first)
			}
			return readdirs.Load() - before
		})
		if n != 0 {
			t.Errorf("%s: listing again made %d Readdir calls, want 0 (kernel cache)", rel, n)
		}
	}

	group := "vm/100"
	first := list(group)
	before := readdirs.Load()
	snap, err := f.backup(snapSpec{g: store.Group{Type: "vm", ID: "100"}, at: t0.Add(5 * time.Hour),
		images: map[string][]byte{"disk.img": randomData(9, 1000)}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * refresh)
	again := list(group)
	if !slices.Contains(again, snap.TimeString()) {
		t.Errorf("%s after a new snapshot: %q (before %q), want %s in it", group, again, first, snap.TimeString())
	}
	if readdirs.Load() == before {
		t.Errorf("%s: second listing made no Readdir: the group's list is cached", group)
	}
}
