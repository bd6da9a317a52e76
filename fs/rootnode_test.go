package fs

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRootFromReaddirplus: a root the kernel holds is in the entries of
// a READDIRPLUS of its snapshot (an entry not held yet goes without a
// node: dir.lookup with plus), which the kernel counts as a lookup, and
// so must the table; and it is dropped, its tree closed, when the kernel
// forgets it.
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
	waitRootsForgotten(t, srv)
}

// rootLookups returns the lookup counts of the archive roots' nodes the
// table holds.
func rootLookups(srv *Server) []uint64 {
	t := srv.fsys.raw
	t.mu.Lock()
	defer t.mu.Unlock()
	var ns []uint64
	for s, v := range t.objs {
		if _, ok := v.(*treeNode); ok {
			ns = append(ns, t.slot(s).nlookup)
		}
	}
	return ns
}

// TestRootParallelLookups: parallel walks through an archive's root,
// which the kernel forgets between rounds (drop_caches), so each round
// gives the root a new node id: every walk reaches the tree, and once the
// kernel forgets everything no root node is held and no tree stays open.
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
	waitRootsForgotten(t, srv)
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

// waitRootsForgotten waits until the kernel has forgotten every archive
// root and their trees are closed: a FORGET drops the root's node, then
// closes its tree outside the table's lock, so both are waited for. The
// bound is on a hang (the kernel's FORGETs come when it gets to them),
// not a measurement.
func waitRootsForgotten(t *testing.T, srv *Server) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); (len(rootLookups(srv)) > 0 || openTrees(srv) > 0) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := rootLookups(srv); len(got) > 0 {
		t.Fatalf("after drop_caches root ids are held %v times", got)
	}
	srv.fsys.openTrees.Range(func(k, _ any) bool {
		t.Errorf("tree %s still open after its root was forgotten", k.(*openTree).path)
		return true
	})
}
