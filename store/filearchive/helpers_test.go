package filearchive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newStore(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

var testGroup = store.Group{Type: "host", ID: "test"}

// snapTime gives each backup of a test its own second.
var snapTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func nextTime() time.Time {
	snapTime = snapTime.Add(time.Minute)
	return snapTime
}

// backupTree backs dir up as root.pxar into a new snapshot of testGroup.
func backupTree(t testing.TB, s *store.Store, dir string, opt Options) (Result, store.Snapshot) {
	t.Helper()
	ctx := context.Background()
	b, err := s.StartBackup(ctx, testGroup, nextTime())
	must(t, err)
	b.Sync = store.SyncNone
	if opt.racyMargin == 0 {
		opt.racyMargin = time.Nanosecond // the test changes files after the backup, never during
	}
	res, err := AddArchive(ctx, b, "root.pxar", dir, opt)
	if err != nil {
		b.Abort()
		t.Fatal(err)
	}
	must(t, b.Finish())
	return res, b.Snapshot()
}

// openTree opens root.pxar of snap through a fresh cache.
func openTree(t testing.TB, s *store.Store, snap store.Snapshot) *pxar.Accessor {
	t.Helper()
	ctx := context.Background()
	m, err := s.ReadManifest(snap)
	must(t, err)
	c, err := store.NewCache(s, 64<<20)
	must(t, err)
	a, closeArchive, err := OpenName(ctx, s, snap, m, "root.pxar", c)
	must(t, err)
	t.Cleanup(func() { closeArchive(); c.Close() })
	return a
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, data, 0o644))
}

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 99))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
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

// richTree makes a source tree with every entry kind, odd names, sparse
// and empty files, hard links across directories, xattrs and an ACL
// (where the file system takes them). It returns the ACLs it set.
func richTree(t testing.TB, root string) map[string]*pxar.ACL {
	acls := map[string]*pxar.ACL{}
	writeFile(t, root+"/plain", []byte("hello world\n"))
	writeFile(t, root+"/empty", nil)
	writeFile(t, root+"/with space", []byte("s"))
	writeFile(t, root+"/new\nline", []byte("n"))
	writeFile(t, root+"/bad\xff\xfeutf8", []byte("u"))
	writeFile(t, root+"/"+strings.Repeat("L", 255), []byte("long name"))
	writeFile(t, root+"/a/b/c/d/e/f/g/h/i/j/deep", []byte("deep"))
	writeFile(t, root+"/big", randBytes(3<<20+11, 1))
	f, err := os.Create(root + "/sparse")
	must(t, err)
	_, err = f.WriteAt([]byte("middle"), 5<<20)
	must(t, err)
	must(t, f.Truncate(9<<20))
	must(t, f.Close())
	writeFile(t, root+"/h1/orig", []byte("linked content"))
	must(t, os.MkdirAll(root+"/h2", 0o755))
	must(t, os.Link(root+"/h1/orig", root+"/h2/link"))
	must(t, os.Link(root+"/h1/orig", root+"/h1/zlink"))
	must(t, os.Symlink("plain", root+"/sym"))
	must(t, os.Symlink("/nonexistent/target", root+"/dangling"))
	must(t, os.Symlink("a", root+"/dirlink"))
	must(t, os.MkdirAll(root+"/emptydir", 0o700))
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
	writeFile(t, root+"/xattr", []byte("x"))
	if err := unix.Setxattr(root+"/xattr", "user.b", []byte("two"), 0); err != nil {
		t.Logf("no user xattrs: %v", err)
	} else {
		must(t, unix.Setxattr(root+"/xattr", "user.a", []byte{}, 0))
	}
	writeFile(t, root+"/acl", []byte("acl"))
	acc := aclXattr([3]uint32{0x01, 6, 0xffffffff}, [3]uint32{0x02, 4, 1000}, [3]uint32{0x04, 4, 0xffffffff},
		[3]uint32{0x10, 6, 0xffffffff}, [3]uint32{0x20, 0, 0xffffffff})
	if err := unix.Setxattr(root+"/acl", pxar.XattrACLAccess, acc, 0); err != nil {
		t.Logf("no ACLs: %v", err)
	} else {
		g := uint64(4)
		acls["acl"] = &pxar.ACL{Users: []pxar.ACLEntry{{ID: 1000, Perm: 4}}, GroupObj: &g}
	}
	return acls
}

// userXattrs lists the user.* xattrs of path, sorted by name.
func userXattrs(t testing.TB, path string) []pxar.Xattr {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		return nil
	}
	var out []pxar.Xattr
	for _, name := range strings.Split(strings.TrimSuffix(string(buf[:n]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, "user.") {
			continue
		}
		v := make([]byte, 4096)
		k, err := unix.Lgetxattr(path, name, v)
		must(t, err)
		out = append(out, pxar.Xattr{Name: []byte(name), Value: v[:k]})
	}
	slices.SortFunc(out, func(a, b pxar.Xattr) int { return bytes.Compare(a.Name, b.Name) })
	return out
}

// compareTree checks every entry of the source tree at root (but those
// skip names) against the archive, and that the archive holds no more.
func compareTree(t testing.TB, a *pxar.Accessor, root string, acls map[string]*pxar.ACL, skip func(rel string) bool) {
	t.Helper()
	ctx := context.Background()
	ids := map[uint64]uint64{} // source inode → archive entry ID
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
		compareEntry(t, a, p, rel, e, acls[rel], ids)
		return nil
	})
	must(t, err)
	if n := countEntries(t, a, a.Root()); n != count {
		t.Errorf("archive holds %d entries, source %d", n, count)
	}
}

func countEntries(t testing.TB, a *pxar.Accessor, dir *pxar.Entry) int {
	ctx := context.Background()
	r, err := a.ReadDirSorted(ctx, dir)
	must(t, err)
	n := 1
	for {
		e, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
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

func compareEntry(t testing.TB, a *pxar.Accessor, p, rel string, e *pxar.Entry, acl *pxar.ACL, ids map[uint64]uint64) {
	t.Helper()
	var st unix.Stat_t
	must(t, unix.Lstat(p, &st))
	s := e.Metadata.Stat
	if s.Mode != uint64(st.Mode) || s.UID != st.Uid || s.GID != st.Gid || s.Mtime != timestamp(st.Mtim) {
		t.Errorf("%q: stat %+v, source mode %o uid %d gid %d mtime %d.%09d", rel, s, st.Mode, st.Uid, st.Gid, st.Mtim.Sec, st.Mtim.Nsec)
	}
	if want := userXattrs(t, p); len(want) > 0 && !e.Metadata.Equal(&pxar.Metadata{Stat: s, Xattrs: want, ACL: e.Metadata.ACL}) {
		t.Errorf("%q: xattrs %q, want %q", rel, e.Metadata.Xattrs, want)
	}
	if acl != nil && !e.Metadata.Equal(&pxar.Metadata{Stat: s, Xattrs: e.Metadata.Xattrs, ACL: *acl}) {
		t.Errorf("%q: ACL %+v, want %+v", rel, e.Metadata.ACL, *acl)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if id, ok := ids[st.Ino]; ok && id != e.ID {
			t.Errorf("%q: hard link resolves to %d, want %d", rel, e.ID, id)
		}
		ids[st.Ino] = e.ID
		want, err := os.ReadFile(p)
		must(t, err)
		if got := content(t, a, e); !bytes.Equal(got, want) {
			t.Errorf("%q: content differs (%d vs %d bytes)", rel, len(got), len(want))
		}
	case unix.S_IFLNK:
		target, _ := os.Readlink(p)
		if e.Kind != pxar.KindSymlink || e.Target != target {
			t.Errorf("%q: symlink %v %q, want %q", rel, e.Kind, e.Target, target)
		}
	case unix.S_IFCHR, unix.S_IFBLK:
		if e.Kind != pxar.KindDevice || e.Device.Dev() != st.Rdev {
			t.Errorf("%q: device %+v, want rdev %#x", rel, e.Device, st.Rdev)
		}
	}
}

func content(t testing.TB, a *pxar.Accessor, e *pxar.Entry) []byte {
	t.Helper()
	r, err := a.Open(context.Background(), e)
	must(t, err)
	got, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	must(t, err)
	return got
}
