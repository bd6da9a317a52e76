package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestMountCopyEqualsRestore: copying a tree out of the mount with cp -a
// gives what `cairn restore` gives, and both equal the source, with one
// known difference: pxar records no link counts, so the mount shows hard
// links as one inode with a link count of 1, and cp -a copies them as
// separate files (restore links them).
func TestMountCopyEqualsRestore(t *testing.T) {
	e2e.NeedFUSE(t)
	st := e2e.SharedStore(t)
	src := filepath.Join(t.TempDir(), "src")
	e2e.WriteTree(t, src, map[string]string{"a/one.txt": "one\n", "a/b/two.txt": strings.Repeat("two", 50000), "c/empty": ""})
	os.Symlink("../a/one.txt", filepath.Join(src, "c", "link"))
	os.Link(filepath.Join(src, "a", "one.txt"), filepath.Join(src, "c", "hard"))
	unix.Mkfifo(filepath.Join(src, "fifo"), 0o640)
	unix.Setxattr(filepath.Join(src, "a", "one.txt"), "user.note", []byte("kept"), 0)
	os.Chmod(filepath.Join(src, "a", "b"), 0o711)
	sparse, _ := os.Create(filepath.Join(src, "sparse"))
	sparse.Truncate(3 << 20)
	sparse.WriteAt([]byte("tail"), 3<<20-4)
	sparse.Close()
	os.Chtimes(filepath.Join(src, "a", "one.txt"), time.Unix(1500000000, 123456789), time.Unix(1500000000, 123456789))
	r := e2e.MustCairn(t, "--store", st, "backup", "--type", "ct", "--id", "cp-vs-restore", "--json", "tree.pxar:"+src)
	snap := e2e.ParsePxarSummary(t, r.Stdout).Snapshot

	restored := filepath.Join(t.TempDir(), "restored")
	e2e.MustCairn(t, "--store", st, "restore", snap, "tree.pxar", restored)
	mnt := e2e.MountStore(t, st)
	copied := filepath.Join(t.TempDir(), "copied")
	if out, err := exec.Command("cp", "-a", filepath.Join(mnt, snap, "tree.pxar"), copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v: %s", err, out)
	}
	want := e2e.TreeListing(t, src)
	if got := e2e.TreeListing(t, restored); got != want {
		t.Fatalf("restore differs from the source:\n%s\n---- want\n%s", got, want)
	}
	unsynced := filepath.Join(t.TempDir(), "unsynced")
	e2e.MustCairn(t, "--store", st, "restore", "--no-sync", "--threads", "1", snap, "tree.pxar", unsynced)
	if got := e2e.TreeListing(t, unsynced); got != want {
		t.Fatalf("restore --no-sync --threads 1 differs from the source:\n%s\n---- want\n%s", got, want)
	}
	unlinked := regexp.MustCompile(` =[^ ]+`)
	if got := e2e.TreeListing(t, copied); got != unlinked.ReplaceAllString(want, "") {
		t.Fatalf("cp -a from the mount differs from the source:\n%s\n---- want\n%s", got, want)
	}
	var h1, h2 unix.Stat_t
	unix.Lstat(filepath.Join(mnt, snap, "tree.pxar", "a", "one.txt"), &h1)
	unix.Lstat(filepath.Join(mnt, snap, "tree.pxar", "c", "hard"), &h2)
	if h1.Ino != h2.Ino {
		t.Errorf("hard links have inodes %d and %d in the mount", h1.Ino, h2.Ino)
	}
	var s1, s2 unix.Stat_t
	unix.Stat(filepath.Join(restored, "sparse"), &s1)
	unix.Stat(filepath.Join(copied, "sparse"), &s2)
	if s1.Blocks*512 >= 3<<20 {
		t.Errorf("restored sparse file is not sparse: %d bytes allocated", s1.Blocks*512)
	}
}
