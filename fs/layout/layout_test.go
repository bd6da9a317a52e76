package layout

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

// TestLayoutTree walks a store's layout without a mount: namespaces (an
// "ns" directory where there are children), backup types, groups, their
// finished snapshots (one in progress is not shown) and latest, the
// newest finished one; a snapshot's archives as files of their size and
// file archives as trees (left out without a tree reader); inode numbers
// from paths in the store.
func TestLayoutTree(t *testing.T) {
	s := newStore(t)
	a := store.Group{Type: store.TypeHost, ID: "a"}
	first := backup(t, s, a, at(0), true)
	second := backup(t, s, a, at(60), true)
	start(t, s, a, at(120), true) // in progress
	backup(t, s, store.Group{Type: store.TypeVM, ID: "b"}, at(0), false)
	backup(t, s, store.Group{NS: "prod", Type: store.TypeCT, ID: "c"}, at(0), false)
	backup(t, s, store.Group{NS: "prod/db", Type: store.TypeHost, ID: "d"}, at(0), false)

	l := &Layout{Store: s, Refresh: time.Minute, Started: at(-1), FileMode: 0o440, Trees: true}
	root := l.NSDir("")
	wantNames(t, "the root", load(t, root, nil), "host", "ns", "vm")
	ns := child(t, root, "ns")
	wantNames(t, "ns", load(t, ns, nil), "prod")
	prod := child(t, ns, "prod")
	wantNames(t, "prod", load(t, prod, nil), "ct", "ns")
	wantNames(t, "prod/ns", load(t, child(t, prod, "ns"), nil), "db")
	wantNames(t, "prod/db's host", load(t, child(t, child(t, child(t, prod, "ns"), "db"), "host"), nil), "d")

	host := child(t, root, "host")
	hosts := load(t, host, nil)
	wantNames(t, "host", hosts, "a")
	if e := hosts[0]; e.Ino != Ino("host/a") || !e.Mtime.Equal(at(-1)) {
		t.Fatalf("group a: %+v", e)
	}
	group := child(t, host, "a")
	snaps := load(t, group, nil)
	wantNames(t, "group a", snaps, first.TimeString(), second.TimeString(), Latest)
	latest := snaps[2]
	if latest.Kind != KindLatest || latest.Target != second.TimeString() || latest.Mode != syscall.S_IFLNK|0o777 ||
		latest.Size != uint64(len(latest.Target)) || latest.Ino != Ino("host/a", Latest, second.TimeString()) {
		t.Fatalf("latest: %+v", latest)
	}
	if e := snaps[1]; e.Ino != Ino(second.String()) || !e.Mtime.Equal(second.Time) {
		t.Fatalf("snapshot entry %+v", e)
	}

	arch := load(t, child(t, group, second.TimeString()), nil)
	wantNames(t, "a snapshot", arch, "conf.blob", "root.pxar")
	blob, tree := arch[0], arch[1]
	if blob.Kind != KindFile || !blob.Archive.Blob || blob.Size != uint64(len("memory: 2048\n")) ||
		blob.Mode != syscall.S_IFREG|0o440 || blob.Ino != Ino(second.String()+"/conf.blob") || !blob.Mtime.Equal(second.Time) {
		t.Fatalf("blob: %+v", blob)
	}
	if tree.Kind != KindTree || !tree.Lazy() || tree.Mode != syscall.S_IFDIR|0o555 || tree.Archive.Snapshot() != second ||
		tree.Archive.Path() != second.String()+"/root.pxar" {
		t.Fatalf("file archive: %+v", tree)
	}

	l.Trees = false
	wantNames(t, "a snapshot without a tree reader", load(t, l.SnapshotDir(second, store.ManifestStamp{}), nil), "conf.blob")
}

// TestLatestMoves: a group's listing, on a clock of the test, shows a
// new snapshot and moves latest to it once stale (not before), reporting
// the old latest gone (a new inode: the kernel caches symlink targets);
// a forgotten snapshot leaves and latest moves back; a snapshot in
// progress shows once finished; a forgotten group lists empty.
func TestLatestMoves(t *testing.T) {
	s := newStore(t)
	g := store.Group{Type: store.TypeVM, ID: "100"}
	first := backup(t, s, g, at(0), false)
	l := &Layout{Store: s, Refresh: time.Minute}
	c := &clock{now: at(1000)}
	d := l.GroupDir(g)
	ctx := context.Background()
	step := func(what string, wantGone []string, want ...string) []Entry {
		t.Helper()
		c.now = c.now.Add(time.Minute)
		es, gone, err := d.Load(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		wantNames(t, what, es, want...)
		if !slices.Equal(gone, wantGone) {
			t.Fatalf("%s: gone %q, want %q", what, gone, wantGone)
		}
		return es
	}
	es := load(t, d, c)
	wantNames(t, "first listing", es, first.TimeString(), Latest)
	latestTarget(t, es, first)

	second := backup(t, s, g, at(60), false)
	c.now = c.now.Add(59 * time.Second)
	wantNames(t, "a fresh listing", load(t, d, nil), first.TimeString(), Latest)
	c.now = c.now.Add(-59 * time.Second) // step adds a minute: stale
	es = step("a new snapshot", []string{Latest}, first.TimeString(), second.TimeString(), Latest)
	latestTarget(t, es, second)
	if _, changed := d.Fresh(); !changed.Equal(c.now) {
		t.Fatalf("changed at %v, want %v", changed, c.now)
	}

	b := start(t, s, g, at(120), false)
	es = step("a snapshot in progress", nil, first.TimeString(), second.TimeString(), Latest)
	latestTarget(t, es, second)
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	third := b.Snapshot()
	es = step("a finished snapshot", []string{Latest}, first.TimeString(), second.TimeString(), third.TimeString(), Latest)
	latestTarget(t, es, third)

	for _, snap := range []store.Snapshot{second, third} {
		if err := s.ForgetSnapshot(ctx, snap); err != nil {
			t.Fatal(err)
		}
	}
	es = step("forgotten snapshots", []string{second.TimeString(), third.TimeString(), Latest}, first.TimeString(), Latest)
	latestTarget(t, es, first)

	if _, err := s.ForgetGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	step("a forgotten group", []string{first.TimeString(), Latest})
}

// latestTarget fails the test unless es's latest points to snap.
func latestTarget(t *testing.T, es []Entry, snap store.Snapshot) {
	t.Helper()
	e, ok := Find(es, Latest)
	if !ok || e.Target != snap.TimeString() || e.Ino != Ino(snap.Group.String(), Latest, snap.TimeString()) {
		t.Fatalf("latest %+v (found %v), want -> %s", e, ok, snap.TimeString())
	}
}
