package test

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// needFUSE skips without /dev/fuse, unless CAIRN_TEST_REQUIRE_FUSE=1.
func needFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("CAIRN_TEST_REQUIRE_FUSE") == "1" {
			t.Fatalf("/dev/fuse is missing and CAIRN_TEST_REQUIRE_FUSE=1: %v", err)
		}
		t.Skipf("no FUSE here (/dev/fuse: %v); set CAIRN_TEST_REQUIRE_FUSE=1 to make this a failure", err)
	}
}

// mountStore runs `cairn mount [args…]` on a new directory and waits for
// its "mounted" log line; the mount is taken down when the test ends.
func mountStore(t *testing.T, st string, args ...string) string {
	t.Helper()
	needFUSE(t)
	mnt := t.TempDir()
	cmd := exec.Command(binPath, append(append([]string{"--store", st, "mount"}, args...), mnt)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	mounted := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		seen := false
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), "msg=mounted") {
				seen = true
				mounted <- true
			}
		}
		if !seen {
			mounted <- false
		}
	}()
	select {
	case ok := <-mounted:
		if !ok {
			cmd.Wait()
			t.Fatal("cairn mount exited without mounting")
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("cairn mount did not mount within a minute")
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("cairn mount did not exit after SIGTERM")
		}
	})
	return mnt
}

// treeListing describes a tree entry by entry: type, mode, owner, size,
// mtime, content digest, symlink target, xattrs, and hard-link groups.
func treeListing(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	first := map[uint64]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		l := fmt.Sprintf("%q %o %d:%d", rel, st.Mode, st.Uid, st.Gid)
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			l += fmt.Sprintf(" mtime=%d.%09d", st.Mtim.Sec, st.Mtim.Nsec)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			io.Copy(h, f)
			f.Close()
			l += fmt.Sprintf(" %d %x", st.Size, h.Sum(nil)[:8])
			if st.Nlink > 1 {
				if f, ok := first[st.Ino]; ok {
					l += " =" + f
				} else {
					first[st.Ino] = rel
				}
			}
		case unix.S_IFLNK:
			target, _ := os.Readlink(p)
			l += " -> " + target
		case unix.S_IFCHR, unix.S_IFBLK:
			l += fmt.Sprintf(" rdev=%d", st.Rdev)
		}
		buf := make([]byte, 4096)
		if n, err := unix.Llistxattr(p, buf); err == nil && n > 0 {
			names := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00")
			sort.Strings(names)
			for _, name := range names {
				v := make([]byte, 4096)
				m, _ := unix.Lgetxattr(p, name, v)
				l += fmt.Sprintf(" %s=%x", name, v[:max(m, 0)])
			}
		}
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestMountCopyEqualsRestore: copying a tree out of the mount with cp -a
// gives what `cairn restore` gives, and both equal the source, with one
// known difference: pxar records no link counts, so the mount shows hard
// links as one inode with a link count of 1, and cp -a copies them as
// separate files (restore links them).
func TestMountCopyEqualsRestore(t *testing.T) {
	needFUSE(t)
	st := sharedStore(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a/one.txt": "one\n", "a/b/two.txt": strings.Repeat("two", 50000), "c/empty": ""})
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
	r := mustCairn(t, "--store", st, "backup", "--type", "ct", "--id", "cp-vs-restore", "--json", "tree.pxar:"+src)
	snap := parsePxarSummary(t, r.stdout).Snapshot

	restored := filepath.Join(t.TempDir(), "restored")
	mustCairn(t, "--store", st, "restore", snap, "tree.pxar", restored)
	mnt := mountStore(t, st)
	copied := filepath.Join(t.TempDir(), "copied")
	if out, err := exec.Command("cp", "-a", filepath.Join(mnt, snap, "tree.pxar"), copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v: %s", err, out)
	}
	want := treeListing(t, src)
	if got := treeListing(t, restored); got != want {
		t.Fatalf("restore differs from the source:\n%s\n---- want\n%s", got, want)
	}
	unsynced := filepath.Join(t.TempDir(), "unsynced")
	mustCairn(t, "--store", st, "restore", "--no-sync", "--threads", "1", snap, "tree.pxar", unsynced)
	if got := treeListing(t, unsynced); got != want {
		t.Fatalf("restore --no-sync --threads 1 differs from the source:\n%s\n---- want\n%s", got, want)
	}
	unlinked := regexp.MustCompile(` =[^ ]+`)
	if got := treeListing(t, copied); got != unlinked.ReplaceAllString(want, "") {
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
