package fs

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestRawTable runs random lookups and forgets of entries of two trees
// (hard links: entries sharing an ID) against a model: an entry looked
// up again gets the node id the kernel holds, a forgotten one's id is
// dead and never names another entry, and once everything is forgotten
// the pages and the index are given back.
func TestRawTable(t *testing.T) {
	tab := newRawTable(nil)
	trees := []*openTree{{path: "a"}, {path: "b"}}
	type key struct {
		tree int
		id   uint64
	}
	held := map[key]uint64{}  // entry -> node id
	count := map[uint64]int{} // node id -> lookups
	var dead []uint64
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 200_000 {
		k := key{rng.IntN(2), uint64(rng.IntN(5000))}
		if rng.IntN(3) > 0 || len(held) == 0 {
			e := TreeEntry{ID: k.id, Mode: syscall.S_IFREG | 0o644, Ref: TreeRef{k.id, 7}}
			id, ok := tab.lookup(trees[k.tree], &e, 1)
			if !ok {
				t.Fatal("table full")
			}
			if old, ok := held[k]; ok && old != id {
				t.Fatalf("step %d: %v looked up again got %x, the kernel holds %x", step, k, id, old)
			}
			held[k] = id
			count[id]++
			if r, ok := tab.node(id); !ok || r.ref != e.Ref || r.tree != trees[k.tree] {
				t.Fatalf("step %d: node %x: %+v %v", step, id, r, ok)
			}
			continue
		}
		for kk, id := range held { // forget one, all its lookups or some
			n := uint64(1 + rng.IntN(count[id]))
			_ = tab.forget(id, n)
			if count[id] -= int(n); count[id] == 0 {
				delete(held, kk)
				delete(count, id)
				dead = append(dead, id)
			}
			break
		}
	}
	if got := tab.count(); got != int64(len(held)) {
		t.Fatalf("table counts %d entries, %d held", got, len(held))
	}
	for _, id := range dead {
		if _, ok := tab.node(id); ok && count[id] == 0 {
			t.Fatalf("forgotten id %x still names an entry", id)
		}
	}
	for _, id := range held {
		_ = tab.forget(id, uint64(count[id]))
	}
	if tab.count() != 0 || len(tab.index) > minIndex {
		t.Fatalf("all forgotten: %d entries, index of %d buckets", tab.count(), len(tab.index))
	}
	for i, p := range tab.pages {
		if p != nil {
			t.Fatalf("page %d kept after every entry was forgotten", i)
		}
	}
	for _, o := range trees {
		if o.rawIdx != 0 || o.rawLive != 0 {
			t.Fatalf("tree %s still indexed (%d, %d)", o.path, o.rawIdx, o.rawLive)
		}
	}
}

// TestRawHardLinkType: an entry of another file type with the same ID (a
// hostile archive) gets a node of its own, never one of the wrong type.
func TestRawHardLinkType(t *testing.T) {
	tab := newRawTable(nil)
	o := &openTree{path: "a"}
	f := TreeEntry{ID: 9, Mode: syscall.S_IFREG}
	d := TreeEntry{ID: 9, Mode: syscall.S_IFDIR}
	a, _ := tab.lookup(o, &f, 1)
	b, _ := tab.lookup(o, &d, 1)
	c, _ := tab.lookup(o, &f, 1)
	if a == b || a != c {
		t.Fatalf("file %x, dir %x, file again %x", a, b, c)
	}
}

// TestRawRoutes: every node below the mount's root has a node id of the
// mount's table (generation<<32 | slot, never bit 63): the layout's
// directories, the archive's root and the entries below it alike, and
// each names the node it was given for.
func TestRawRoutes(t *testing.T) {
	s, snap := manyFilesArchive(t, 2, 3)
	srv, mnt, logs := mountT(t, Options{Store: s, Trees: PxarTrees{}, Debug: true})
	root := filepath.Join(mnt, snap.String(), "root.pxar")
	if _, err := os.Lstat(filepath.Join(root, "d001/file0002.go")); err != nil {
		t.Fatal(err)
	}
	// go-fuse's debug log: `rx 24: LOOKUP n5  "root.pxar" ...` and
	// `tx 24:     OK, {n6 ...`
	rx := regexp.MustCompile(`rx (\d+): LOOKUP n\d+ +\\?"(` + regexp.QuoteMeta(snap.Type) + `|root\.pxar|d001|file0002\.go)\\?"`)
	tx := regexp.MustCompile(`tx (\d+): +OK, \{n(\d+) `)
	names := map[string]string{}
	for _, m := range rx.FindAllStringSubmatch(logs.String(), -1) {
		names[m[1]] = m[2]
	}
	ids := map[string]uint64{}
	for _, m := range tx.FindAllStringSubmatch(logs.String(), -1) {
		if name, ok := names[m[1]]; ok {
			ids[name], _ = strconv.ParseUint(m[2], 10, 64)
		}
	}
	if len(ids) != 4 {
		t.Fatalf("lookups found in the log: %v", ids)
	}
	for name, id := range ids {
		r, ok := srv.fsys.raw.node(id)
		switch {
		case id>>63 != 0 || id>>32 == 0:
			t.Errorf("%s: node id %#x is no id of the table", name, id)
		case !ok:
			t.Errorf("%s: node id %#x names no node", name, id)
		case name == "root.pxar" && (!r.root || r.tree == nil):
			t.Errorf("root.pxar: node %+v, want the archive's root", r)
		case name == snap.Type && r.obj == nil:
			t.Errorf("%s: node %+v, want a directory of the layout", name, r)
		case (name == "d001" || name == "file0002.go") && (r.obj != nil || r.tree == nil):
			t.Errorf("%s: node %+v, want an entry of the archive", name, r)
		}
	}
}

// TestRawReadOnly: nothing below an archive's root can be changed, in
// both modes (the one-mount mode is mounted read-write for .jobs), with
// the root and entries below it in one request.
func TestRawReadOnly(t *testing.T) {
	s, snap := manyFilesArchive(t, 2, 3)
	forModes(t, func(t *testing.T, one bool) {
		_, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}, OneMount: one})
		root := filepath.Join(mnt, snap.String(), "root.pxar")
		dir := filepath.Join(root, "d000")
		file := filepath.Join(dir, "file0001.go")
		ops := map[string]func() error{
			"open for writing": func() error { return openClose(file, os.O_WRONLY) },
			"truncate":         func() error { return os.Truncate(file, 0) },
			"create":           func() error { return openClose(filepath.Join(dir, "new"), os.O_CREATE|os.O_WRONLY) },
			"create in root":   func() error { return openClose(filepath.Join(root, "new"), os.O_CREATE|os.O_WRONLY) },
			"mkdir":            func() error { return os.Mkdir(filepath.Join(dir, "x"), 0o755) },
			"rename":           func() error { return os.Rename(file, filepath.Join(dir, "x")) },
			"rename to root":   func() error { return os.Rename(file, filepath.Join(root, "x")) },
			"rename from root": func() error { return os.Rename(filepath.Join(root, "d001"), filepath.Join(dir, "x")) },
			"remove":           func() error { return os.Remove(file) },
			"rmdir":            func() error { return os.Remove(dir) },
			"symlink":          func() error { return os.Symlink("x", filepath.Join(dir, "l")) },
			"link":             func() error { return os.Link(file, filepath.Join(dir, "h")) },
			"link into root":   func() error { return os.Link(file, filepath.Join(root, "h")) },
			"chmod":            func() error { return os.Chmod(file, 0o600) },
			"chmod dir":        func() error { return os.Chmod(dir, 0o700) },
			"setxattr":         func() error { return syscall.Setxattr(file, "user.x", []byte("1"), 0) },
			"removexattr":      func() error { return syscall.Removexattr(file, "user.x") },
		}
		for name, op := range ops {
			if err := op(); !errors.Is(err, syscall.EROFS) {
				t.Errorf("%s: %v, want EROFS", name, err)
			}
		}
		if got, err := os.ReadFile(file); err != nil || string(got) != "0 1\n" {
			t.Errorf("read %s: %q %v", file, got, err)
		}
	})
}

// TestHasAccess: access(2) on a node as go-fuse's node API answered it.
func TestHasAccess(t *testing.T) {
	file := fuse.Attr{Mode: syscall.S_IFREG | 0o640, Owner: fuse.Owner{Uid: 1000, Gid: 100}}
	dir := fuse.Attr{Mode: syscall.S_IFDIR | 0o600, Owner: fuse.Owner{Uid: 1000, Gid: 100}}
	for _, c := range []struct {
		uid, gid uint32
		a        fuse.Attr
		mask     uint32
		ok       bool
	}{
		{1000, 1, file, 6, true},  // owner rw
		{1000, 1, file, 1, false}, // owner x
		{2000, 100, file, 4, true},
		{2000, 100, file, 2, false},
		{2000, 1, file, 4, false}, // other
		{0, 0, file, 6, true},     // root rw
		{0, 0, file, 1, false},    // root x without an x bit
		{0, 0, dir, 1, true},      // root x on a directory
		{2000, 1, file, 0, true},  // F_OK
	} {
		if got := hasAccess(fuse.Caller{Owner: fuse.Owner{Uid: c.uid, Gid: c.gid}}, c.a, c.mask); got != c.ok {
			t.Errorf("uid %d gid %d mode %o mask %d: %v, want %v", c.uid, c.gid, c.a.Mode, c.mask, got, c.ok)
		}
	}
}
