package fs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestListingOpensNoArchive checks that listing a snapshot's directory
// (READDIRPLUS, which looks up every entry) loads no chunk of its file
// archive, and that the archive's root still shows its own mode, owner
// and time as soon as it is stat'ed, and again after the kernel forgot
// it. With the root's Getattr called at lookup, as before, the listing
// loads the archive's first chunk and the test fails.
func TestListingOpensNoArchive(t *testing.T) {
	meta, payload := rootWithF(t)
	s, snap := splitArchiveStore(t, "lazy", meta, payload)
	srv, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
	dir := filepath.Join(mnt, snap.String())
	for round := 0; round < 2; round++ {
		es, err := os.ReadDir(dir)
		if err != nil || len(es) != 1 || es[0].Name() != "root.pxar" || !es[0].IsDir() {
			t.Fatalf("round %d: listing %v, %v", round, es, err)
		}
		if st := srv.Stats(); round == 0 && st.CacheMisses+st.CacheHits != 0 {
			t.Fatalf("listing the snapshot touched %d chunk(s)", st.CacheMisses+st.CacheHits)
		}
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, "root.pxar"), &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode != syscall.S_IFDIR|0o750 || st.Uid != 1000 || st.Gid != 100 || st.Mtim.Sec != 1600000000 {
			t.Fatalf("round %d: root stat mode %o uid %d gid %d mtime %d", round, st.Mode, st.Uid, st.Gid, st.Mtim.Sec)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "root.pxar", "f")); err != nil || string(got) != "hi\n" {
			t.Fatalf("round %d: f %q, %v", round, got, err)
		}
		// the kernel forgets the archive's nodes; the archive stays open
		if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
			t.Logf("cannot drop caches (%v): second round uses the kernel's entries", err)
		}
	}
}
