package test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// smallFS mounts a tmpfs of the given options at a directory of the
// test's own (root only), unmounted when the test ends.
func smallFS(t *testing.T, opts string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a small tmpfs")
	}
	dir := t.TempDir()
	if err := syscall.Mount("none", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// A backup that fills the store's file system says how much it left
// and how to free it now; gc's summary says it too; following the
// advice frees the space.
func TestDiskFullAdvice(t *testing.T) {
	st := filepath.Join(smallFS(t, "size=24m"), "store")
	e2e.MustCairn(t, "--store", st, "init")
	img := filepath.Join(t.TempDir(), "big.img")
	if err := os.WriteFile(img, storetest.RandBytes("full", 40<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2e.Cairn(t, nil, "--store", st, "backup", "--type", "vm", "--id", "full", "--no-sync", "disk.img:"+img)
	if r.Code != 1 || !strings.Contains(r.Stderr, "file system is full") || !strings.Contains(r.Stderr, "cairn gc --atime-cutoff 0") {
		t.Fatalf("backup into a full file system: exit %d:\n%s", r.Code, r.Stderr)
	}
	gc := e2e.MustCairn(t, "--store", st, "gc")
	if !strings.Contains(gc.Stdout, "to free them now, when no backup runs: cairn gc --atime-cutoff 0") {
		t.Fatalf("gc's summary does not say how to free what is pending:\n%s", gc.Stdout)
	}
	var before, after syscall.Statfs_t
	syscall.Statfs(st, &before)
	e2e.MustCairn(t, "--store", st, "gc", "--atime-cutoff", "0")
	syscall.Statfs(st, &after)
	if after.Bfree <= before.Bfree {
		t.Fatalf("gc --atime-cutoff 0 freed nothing: %d free blocks, were %d", after.Bfree, before.Bfree)
	}
}

// init on a file system with too few inodes for the chunk directories
// names the inodes needed and available, and makes nothing.
func TestInitTooFewInodes(t *testing.T) {
	st := filepath.Join(smallFS(t, "nr_inodes=2000"), "store")
	r := e2e.Cairn(t, nil, "--store", st, "init")
	if r.Code != 1 || !strings.Contains(r.Stderr, "free inodes") || !strings.Contains(r.Stderr, "take 65544") {
		t.Fatalf("init with 2000 inodes: exit %d:\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Lstat(st); err == nil {
		t.Fatalf("init refused but made %s", st)
	}
}
