package fs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFileArchiveTree mounts with a TreeOpener: the file archive appears
// as a directory tree with the modes, owners, times, symlinks, hard links
// and xattrs its entries have.
func TestFileArchiveTree(t *testing.T) {
	_, mnt, _ := mountT(t, Options{Trees: fakeOpener{}})
	root := filepath.Join(mnt, "vm/101/2024-01-01T00:00:00Z/root.pxar")
	tree, err := parseFakeTree(treeFixture())
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	err = filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := "/" + strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		seen = append(seen, rel)
		checkTreeEntry(t, p, rel, tree.nodes[rel])
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	checkSameSet(t, "tree entries", seen, keys(tree.nodes))

	if ino(t, filepath.Join(root, "etc/hosts")) != ino(t, filepath.Join(root, "home/hosts.hard")) {
		t.Errorf("hard links have different inode numbers")
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/nope")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("lookup of a missing name: %v, want ENOENT", err)
	}
	buf := make([]byte, 2)
	if _, err := unix.Getxattr(filepath.Join(root, "etc/motd"), "user.note", buf); !errors.Is(err, syscall.ERANGE) {
		t.Errorf("getxattr into a short buffer: %v, want ERANGE", err)
	}
	if _, err := unix.Getxattr(filepath.Join(root, "etc/motd"), "user.none", nil); !errors.Is(err, syscall.ENODATA) {
		t.Errorf("getxattr of a missing name: %v, want ENODATA", err)
	}
}

// checkTreeEntry compares what the mount shows at p with the fake entry.
func checkTreeEntry(t *testing.T, p, rel string, n *fakeNode) {
	t.Helper()
	if n == nil {
		t.Errorf("%s: shown, but not in the archive", rel)
		return
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatalf("stat %s: %v", rel, err)
	}
	e := n.e
	if st.Mode != e.Mode || st.Uid != e.UID || st.Gid != e.GID || st.Mtim.Sec != e.Mtime.Unix() {
		t.Errorf("%s: mode %o uid %d gid %d mtime %d, want %o %d %d %d", rel, st.Mode, st.Uid, st.Gid, st.Mtim.Sec,
			e.Mode, e.UID, e.GID, e.Mtime.Unix())
	}
	if e.Rdev != 0 && st.Rdev != e.Rdev {
		t.Errorf("%s: rdev %d, want %d", rel, st.Rdev, e.Rdev)
	}
	switch e.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, n.content) {
			t.Errorf("%s: read: %v, content equal %v", rel, err, bytes.Equal(got, n.content))
		}
	case syscall.S_IFLNK:
		if got, err := os.Readlink(p); err != nil || got != n.target {
			t.Errorf("%s: readlink = %q, %v; want %q", rel, got, err, n.target)
		}
		return // xattrs of a symlink are not followed by the checks below
	case syscall.S_IFIFO, syscall.S_IFCHR:
		return
	}
	checkXattrs(t, p, rel, n.xattrs)
}

func checkXattrs(t *testing.T, p, rel string, want []Xattr) {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Listxattr(p, buf)
	if err != nil {
		t.Errorf("%s: listxattr: %v", rel, err)
		return
	}
	var names []string
	for _, s := range strings.Split(string(buf[:n]), "\x00") {
		if s != "" {
			names = append(names, s)
		}
	}
	var wantNames []string
	for _, x := range want {
		wantNames = append(wantNames, x.Name)
		m, err := unix.Getxattr(p, x.Name, buf)
		if err != nil || !bytes.Equal(buf[:m], x.Value) {
			t.Errorf("%s: xattr %s = %q, %v; want %q", rel, x.Name, buf[:max(m, 0)], err, x.Value)
		}
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("%s: xattrs %q, want %q", rel, names, wantNames)
	}
}
