package walk

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(data), 0o644))
}

func aclXattr(ents ...[3]uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range ents {
		b = binary.LittleEndian.AppendUint16(b, uint16(e[0]))
		b = binary.LittleEndian.AppendUint16(b, uint16(e[1]))
		b = binary.LittleEndian.AppendUint32(b, e[2])
	}
	return b
}

const undef = 0xffffffff

// want holds metadata the test set on source entries beyond stat.
type want struct {
	xattrs []pxar.Xattr
	acl    *pxar.ACL
	fcaps  []byte
}

// buildTree makes a source tree with every entry kind; it returns the
// extra metadata it managed to set, by relative path.
func buildTree(t *testing.T, root string) map[string]want {
	extra := map[string]want{}
	writeFile(t, root+"/plain", "hello world\n")
	writeFile(t, root+"/empty", "")
	writeFile(t, root+"/with space", "s")
	writeFile(t, root+"/new\nline", "n")
	writeFile(t, root+"/bad\xff\xfeutf8", "u")
	writeFile(t, root+"/"+strings.Repeat("L", 255), "long name")
	writeFile(t, root+"/a/b/c/d/e/f/g/h/i/j/deep", "deep")
	f, err := os.Create(root + "/sparse")
	must(t, err)
	_, err = f.WriteAt([]byte("middle"), 5<<20)
	must(t, err)
	must(t, f.Truncate(9<<20))
	must(t, f.Close())
	// hard links across directories
	writeFile(t, root+"/h1/orig", "linked content")
	must(t, os.MkdirAll(root+"/h2", 0o755))
	must(t, os.Link(root+"/h1/orig", root+"/h2/link"))
	must(t, os.Link(root+"/h1/orig", root+"/h1/zlink"))
	// symlinks, one dangling, one to a directory (not followed)
	must(t, os.Symlink("plain", root+"/sym"))
	must(t, os.Symlink("/nonexistent/target", root+"/dangling"))
	must(t, os.Symlink("a", root+"/dirlink"))
	// special files
	must(t, unix.Mkfifo(root+"/fifo", 0o600))
	sfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	must(t, err)
	must(t, unix.Bind(sfd, &unix.SockaddrUnix{Name: root + "/sock"}))
	unix.Close(sfd)
	if err := unix.Mknod(root+"/chr", unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
		t.Logf("no char device: %v", err)
	}
	if err := unix.Mknod(root+"/blk", unix.S_IFBLK|0o600, int(unix.Mkdev(259, 70000))); err != nil {
		t.Logf("no block device: %v", err)
	}
	// xattrs, ACLs, file capabilities where the file system takes them
	writeFile(t, root+"/xattr", "x")
	if err := unix.Setxattr(root+"/xattr", "user.b", []byte("two"), 0); err != nil {
		t.Logf("no user xattrs: %v", err)
	} else {
		must(t, unix.Setxattr(root+"/xattr", "user.a", []byte{}, 0))
		extra["xattr"] = want{xattrs: []pxar.Xattr{{Name: []byte("user.a"), Value: []byte{}}, {Name: []byte("user.b"), Value: []byte("two")}}}
	}
	writeFile(t, root+"/acl", "acl")
	acc := aclXattr([3]uint32{0x01, 6, undef}, [3]uint32{0x02, 4, 1000}, [3]uint32{0x04, 4, undef},
		[3]uint32{0x08, 6, 50}, [3]uint32{0x10, 6, undef}, [3]uint32{0x20, 0, undef})
	if err := unix.Setxattr(root+"/acl", pxar.XattrACLAccess, acc, 0); err != nil {
		t.Logf("no ACLs: %v", err)
	} else {
		g := uint64(4)
		extra["acl"] = want{acl: &pxar.ACL{Users: []pxar.ACLEntry{{ID: 1000, Perm: 4}}, Groups: []pxar.ACLEntry{{ID: 50, Perm: 6}}, GroupObj: &g}}
		must(t, os.MkdirAll(root+"/acldir", 0o755))
		def := aclXattr([3]uint32{0x01, 7, undef}, [3]uint32{0x02, 7, 2000}, [3]uint32{0x04, 5, undef},
			[3]uint32{0x10, 7, undef}, [3]uint32{0x20, 0, undef})
		must(t, unix.Setxattr(root+"/acldir", pxar.XattrACLDefault, def, 0))
		extra["acldir"] = want{acl: &pxar.ACL{Default: &pxar.ACLDefault{UserObj: 7, GroupObj: 5, Other: 0, Mask: 7},
			DefaultUsers: []pxar.ACLEntry{{ID: 2000, Perm: 7}}}}
	}
	writeFile(t, root+"/fcaps", "caps")
	caps := binary.LittleEndian.AppendUint32(nil, 0x02000001) // VFS_CAP_REVISION_2 | effective
	caps = binary.LittleEndian.AppendUint32(caps, 1<<10)      // CAP_NET_BIND_SERVICE permitted
	caps = append(caps, make([]byte, 12)...)
	if err := unix.Setxattr(root+"/fcaps", pxar.XattrFCaps, caps, 0); err != nil {
		t.Logf("no file capabilities: %v", err)
	} else {
		extra["fcaps"] = want{fcaps: caps}
	}
	return extra
}

func walkTo(t *testing.T, root string, split bool, opts Options) (*pxar.Accessor, Stats, []byte, []byte) {
	t.Helper()
	var mb, pb bytes.Buffer
	var pw io.Writer
	if split {
		pw = &pb
	}
	st, err := Walk(context.Background(), root, &mb, pw, opts)
	must(t, err)
	var pr io.ReaderAt
	if split {
		pr = bytes.NewReader(pb.Bytes())
	}
	a, err := pxar.NewAccessor(context.Background(), bytes.NewReader(mb.Bytes()), int64(mb.Len()), pr, int64(pb.Len()))
	must(t, err)
	return a, st, mb.Bytes(), pb.Bytes()
}

// compareTree checks every source entry (except skipped ones) against the
// archive, and that the archive holds no more entries than the source.
func compareTree(t *testing.T, a *pxar.Accessor, root string, extra map[string]want, skip func(rel string) bool) {
	t.Helper()
	ctx := context.Background()
	inodes := map[uint64]uint64{}
	count := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		must(t, err)
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			rel = ""
		} else if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		count++
		e, err := a.LookupPath(ctx, rel)
		if err != nil {
			t.Errorf("%q: %v", rel, err)
			return nil
		}
		compareEntry(t, a, p, rel, e, extra[rel], inodes)
		return nil
	})
	must(t, err)
	if n := countEntries(t, a, a.Root()); n != count {
		t.Errorf("archive holds %d entries, source %d", n, count)
	}
}

func countEntries(t *testing.T, a *pxar.Accessor, dir *pxar.Entry) int {
	r, err := a.ReadDir(dir)
	must(t, err)
	n := 1
	for {
		e, err := r.Next(context.Background())
		if err == io.EOF {
			return n
		}
		must(t, err)
		if e.Kind == pxar.KindDir {
			n += countEntries(t, a, e)
		} else {
			n++
		}
	}
}

func compareEntry(t *testing.T, a *pxar.Accessor, p, rel string, e *pxar.Entry, w want, inodes map[uint64]uint64) {
	t.Helper()
	var st unix.Stat_t
	must(t, unix.Lstat(p, &st))
	s := e.Metadata.Stat
	if s.Mode != uint64(st.Mode) || s.UID != st.Uid || s.GID != st.Gid ||
		s.Mtime.Secs != st.Mtim.Sec || int64(s.Mtime.Nanos) != st.Mtim.Nsec {
		t.Errorf("%q: stat %+v, source mode %o uid %d gid %d mtime %d.%09d", rel, s, st.Mode, st.Uid, st.Gid, st.Mtim.Sec, st.Mtim.Nsec)
	}
	if w.xattrs != nil && !e.Metadata.Equal(&pxar.Metadata{Stat: s, Xattrs: w.xattrs}) {
		t.Errorf("%q: xattrs %q, want %q", rel, e.Metadata.Xattrs, w.xattrs)
	}
	if w.acl != nil && !e.Metadata.Equal(&pxar.Metadata{Stat: s, ACL: *w.acl}) {
		t.Errorf("%q: ACL %+v, want %+v", rel, e.Metadata.ACL, *w.acl)
	}
	if w.fcaps != nil && !bytes.Equal(e.Metadata.FCaps, w.fcaps) {
		t.Errorf("%q: fcaps %x, want %x", rel, e.Metadata.FCaps, w.fcaps)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if id, ok := inodes[st.Ino]; ok && id != e.ID {
			t.Errorf("%q: hard link resolves to %d, want %d", rel, e.ID, id)
		}
		inodes[st.Ino] = e.ID
		want, err := os.ReadFile(p)
		must(t, err)
		r, err := a.Open(context.Background(), e)
		must(t, err)
		got, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%q: content differs (%d vs %d bytes, %v)", rel, len(got), len(want), err)
		}
	case unix.S_IFLNK:
		target, _ := os.Readlink(p)
		if e.Kind != pxar.KindSymlink || e.Target != target {
			t.Errorf("%q: symlink %v %q, want %q", rel, e.Kind, e.Target, target)
		}
	case unix.S_IFCHR, unix.S_IFBLK:
		if e.Device.Dev() != st.Rdev {
			t.Errorf("%q: device %+v, want rdev %#x", rel, e.Device, st.Rdev)
		}
	}
}

func TestWalkRoundTrip(t *testing.T) {
	root := t.TempDir()
	extra := buildTree(t, root)
	for _, split := range []bool{true, false} {
		var reported []string
		a, st, _, _ := walkTo(t, root, split, Options{OnError: func(p string, err error) { reported = append(reported, p) }})
		if len(reported) != 0 || st.Errors != 0 {
			t.Errorf("errors reported: %q", reported)
		}
		if st.Hardlinks != 2 || st.Symlinks != 3 {
			t.Errorf("stats %+v", st)
		}
		compareTree(t, a, root, extra, nil)
	}
}

func TestWalkExcludes(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root+"/keep", "k")
	writeFile(t, root+"/top-excluded", "x")
	writeFile(t, root+"/sub/top-excluded", "kept: anchored at the root")
	writeFile(t, root+"/sub/x.o", "x")
	writeFile(t, root+"/ex/.pxarexclude", "# comment\n  *.tmp  \n/sub-only\n!keep.tmp\nlogs/\n")
	writeFile(t, root+"/ex/a.tmp", "x")
	writeFile(t, root+"/ex/keep.tmp", "k")
	writeFile(t, root+"/ex/sub-only", "x")
	writeFile(t, root+"/ex/nested/sub-only", "kept: anchored to ex/")
	writeFile(t, root+"/ex/nested/b.tmp", "x")
	writeFile(t, root+"/ex/logs/l", "x")
	writeFile(t, root+"/ex/nested/logs", "kept: a file, not a directory")
	writeFile(t, root+"/other/a.tmp", "kept: outside ex/")
	excluded := map[string]bool{"top-excluded": true, "sub/x.o": true, "ex/a.tmp": true, "ex/sub-only": true,
		"ex/nested/b.tmp": true, "ex/logs": true}
	opts := Options{Exclude: []string{"/top-excluded", "*.o"}}
	for _, split := range []bool{true, false} {
		a, st, _, _ := walkTo(t, root, split, opts)
		if st.Excluded != uint64(len(excluded)) {
			t.Errorf("split=%v: %d excluded, want %d", split, st.Excluded, len(excluded))
		}
		skip := func(rel string) bool { return excluded[rel] }
		if split {
			if got := string(a.Prelude()); got != `{"exclude-patterns":"/top-excluded\n*.o\n"}` {
				t.Errorf("prelude %q", got)
			}
			compareTree(t, a, root, nil, skip)
			continue
		}
		e, err := a.LookupPath(context.Background(), cliName)
		must(t, err)
		r, _ := a.Open(context.Background(), e)
		got, _ := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		if string(got) != "/top-excluded\n*.o\n" {
			t.Errorf(".pxarexclude-cli holds %q", got)
		}
	}
}

func TestWalkReportsAndGoesOn(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root+"/a", "aaaa")
	writeFile(t, root+"/b-shrinks", "0123456789")
	writeFile(t, root+"/c-vanishes", "c")
	writeFile(t, root+"/d", "d")
	hook := func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
		switch f.Name {
		case "a":
			must(t, os.Remove(root+"/c-vanishes"))
		case "b-shrinks":
			must(t, os.Truncate(root+"/b-shrinks", 3))
		}
		return CopyFile(ctx, enc, f)
	}
	got := map[string]error{}
	a, st, _, _ := walkTo(t, root, true, Options{File: hook, OnError: func(p string, err error) { got[p] = err }})
	if !errors.Is(got["c-vanishes"], fs.ErrNotExist) || st.Errors != 2 {
		t.Errorf("reports %v, stats %+v", got, st)
	}
	var ce *pxar.ContentError
	if !errors.As(got["b-shrinks"], &ce) {
		t.Errorf("shrunk file reported as %v", got["b-shrinks"])
	}
	for _, name := range []string{"a", "b-shrinks", "d"} {
		if _, err := a.LookupPath(context.Background(), name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A directory on another file system is stored without its contents.
func TestWalkMountPoint(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root+"/mnt/.keep", "")
	if err := unix.Mount("tmpfs", root+"/mnt", "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount tmpfs: %v", err)
	}
	defer unix.Unmount(root+"/mnt", unix.MNT_DETACH)
	writeFile(t, root+"/mnt/inside", "on tmpfs")
	for _, all := range []bool{false, true} {
		a, st, _, _ := walkTo(t, root, true, Options{AllFileSystems: all})
		_, err := a.LookupPath(context.Background(), "mnt/inside")
		if all != (err == nil) || (st.MountPoints == 1) == all {
			t.Errorf("all=%v: lookup %v, stats %+v", all, err, st)
		}
	}
}
