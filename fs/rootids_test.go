package fs

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestLearnRoots: the archive roots among the entries of a READDIRPLUS
// reply, made with go-fuse's public DirEntryList, are counted under the
// node ids the reply gives, whatever the length of their names; other
// entries (another inode, a file, no node) are not, and the last FORGET
// of a root's id hands its tree back to be closed.
func TestLearnRoots(t *testing.T) {
	tab := newRawTable()
	o := tab.sharedTree(&openTree{path: "snap/root.pxar"})
	if again := tab.sharedTree(&openTree{path: "snap/root.pxar"}); again != o {
		t.Fatal("a second node of the root got a tree of its own")
	}
	root := inoOf("snap/root.pxar")
	l := fuse.NewDirEntryList(make([]byte, 4096), 0)
	add := func(name string, id, ino uint64, mode uint32) {
		eo := l.AddDirLookupEntry(fuse.DirEntry{Name: name, Mode: mode, Ino: ino})
		eo.NodeId, eo.Attr.Ino, eo.Attr.Mode = id, ino, mode
	}
	add("r", 11, root, syscall.S_IFDIR)
	add("other-dir", 12, root+1, syscall.S_IFDIR)
	add("r2345678", 11, root, syscall.S_IFDIR)
	add("a-file", 13, root, syscall.S_IFREG)
	add("no-node", 0, root, syscall.S_IFDIR)
	add("r234567", 14, root, syscall.S_IFDIR)
	tab.learnRoots(l.Bytes())
	got := map[uint64]uint64{}
	for id, r := range tab.roots {
		if r.tree != o {
			t.Errorf("root id %d names another tree", id)
		}
		got[id] = r.nlookup
	}
	if len(got) != 2 || got[11] != 2 || got[14] != 1 || o.rootRefs != 2 {
		t.Fatalf("roots counted %v (tree held by %d ids), want 11: 2, 14: 1", got, o.rootRefs)
	}
	if tab.rootForget(11, 1) != nil || tab.rootForget(14, 1) != nil || tab.rootForget(12, 1) != nil {
		t.Fatal("a tree handed back while the kernel holds its root")
	}
	if tab.rootForget(11, 1) != o {
		t.Fatal("the last FORGET of the root did not hand its tree back")
	}
	if _, ok := tab.node(11); ok {
		t.Fatal("a forgotten root id still names the root")
	}
}

// TestRootFromReaddirplus: a root the kernel holds is in the entries of
// a READDIRPLUS of its snapshot (an entry not held yet goes without a
// node: dir.plusLookup), which the kernel counts as a lookup, and so must
// the table; and it is dropped, its tree closed, when the kernel forgets
// it.
func TestRootFromReaddirplus(t *testing.T) {
	s, snap := manyFilesArchive(t, 2, 3)
	srv, mnt, logs := mountT(t, Options{Store: s, Trees: PxarTrees{}, Debug: true})
	dir := filepath.Join(mnt, snap.String())
	if _, err := os.Lstat(filepath.Join(dir, "root.pxar", "d001", "file0002.go")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadDir(dir); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "READDIRPLUS") {
		t.Fatal("the listing sent no READDIRPLUS")
	}
	if got := rootLookups(srv); len(got) != 1 || got[0] != 2 {
		t.Fatalf("the table counts lookups %v of the root, want one id looked up twice (LOOKUP, READDIRPLUS)", got)
	}
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
		t.Skipf("cannot drop the kernel's caches: %v", err)
	}
	for deadline := time.Now().Add(30 * time.Second); (len(rootLookups(srv)) > 0 || openTrees(srv) > 0) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if got := rootLookups(srv); len(got) > 0 {
		t.Fatalf("after drop_caches root ids are held %v times", got)
	}
	srv.fsys.openTrees.Range(func(k, _ any) bool {
		t.Errorf("tree %s still open after its root was forgotten", k.(*openTree).path)
		return true
	})
}

// rootLookups returns the lookup counts of the root ids the table holds.
func rootLookups(srv *Server) []uint64 {
	t := srv.fsys.raw
	t.mu.Lock()
	defer t.mu.Unlock()
	var ns []uint64
	for _, r := range t.roots {
		ns = append(ns, r.nlookup)
	}
	return ns
}

// TestRootIDClash: a node id go-fuse gives with the raw table's bit set
// (go-fuse 2.12 never does) is not passed to the kernel: a LOOKUP fails,
// a READDIRPLUS entry goes without a node; go-fuse's poll hack id passes.
func TestRootIDClash(t *testing.T) {
	tab := newRawTable()
	out := fuse.EntryOut{NodeId: rawBit | 5}
	if st := tab.learnLookup(fuse.OK, &out); st != fuse.EIO {
		t.Errorf("lookup given id %x: %v, want EIO", out.NodeId, st)
	}
	out.NodeId = pollHackID
	if st := tab.learnLookup(fuse.OK, &out); st != fuse.OK {
		t.Errorf("lookup given the poll hack's id: %v", st)
	}
	l := fuse.NewDirEntryList(make([]byte, 4096), 0)
	for i, id := range []uint64{rawBit | 5, 7} {
		eo := l.AddDirLookupEntry(fuse.DirEntry{Name: "e" + string(rune('0'+i)), Mode: syscall.S_IFREG})
		eo.NodeId, eo.Attr.Ino = id, 1
	}
	tab.learnRoots(l.Bytes())
	var ids []uint64
	for b := l.Bytes(); len(b) > 0; b = b[wireEntryOut+wireDirent+8:] {
		ids = append(ids, binary.NativeEndian.Uint64(b))
	}
	if len(ids) != 2 || ids[0] != 0 || ids[1] != 7 {
		t.Errorf("entries' node ids after the check: %x, want 0 and 7", ids)
	}
}

// TestRootParallelLookups: parallel walks through an archive's root,
// which the kernel forgets between rounds (drop_caches), so each round
// gives the root a new node id: every walk reaches the tree, and once the
// kernel forgets everything no root id is held and no tree stays open.
// (The kernel sends one LOOKUP of a name at a time, so go-fuse seldom
// makes a node it then drops here: with the roots' trees not shared,
// the test failed once in seven runs; without the LOOKUP replies
// counted, always.)
func TestRootParallelLookups(t *testing.T) {
	s, snap := manyFilesArchive(t, 2, 3)
	srv, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
	p := filepath.Join(mnt, snap.String(), "root.pxar", "d001", "file0002.go")
	drop := func() {
		if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
			t.Skipf("cannot drop the kernel's caches: %v", err)
		}
	}
	for range 20 {
		drop()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				if _, err := os.ReadFile(p); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	drop()
	// A FORGET drops the root's id, then closes its tree outside the
	// table's lock: wait for both.
	for deadline := time.Now().Add(30 * time.Second); (len(rootLookups(srv)) > 0 || openTrees(srv) > 0) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if got := rootLookups(srv); len(got) > 0 {
		t.Fatalf("after drop_caches root ids are held %v times", got)
	}
	srv.fsys.openTrees.Range(func(k, _ any) bool {
		t.Errorf("tree %s still open after its root was forgotten", k.(*openTree).path)
		return true
	})
}

// openTrees counts the trees the mount has open.
func openTrees(srv *Server) int {
	n := 0
	srv.fsys.openTrees.Range(func(any, any) bool {
		n++
		return true
	})
	return n
}
