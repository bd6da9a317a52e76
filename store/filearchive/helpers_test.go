package filearchive

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/storetest"
	"golang.org/x/sys/unix"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var newStore = storetest.NewStore

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

var randBytes = storetest.RandSeeded

// richTree makes a source tree with every entry kind, odd names, sparse
// and empty files, hard links across directories, xattrs and an ACL
// (where the file system takes them). It returns the ACLs it set.
func richTree(t testing.TB, root string) map[string]storetest.Want {
	acls := map[string]storetest.Want{}
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
	acc := storetest.ACLXattr([3]uint32{0x01, 6, 0xffffffff}, [3]uint32{0x02, 4, 1000}, [3]uint32{0x04, 4, 0xffffffff},
		[3]uint32{0x10, 6, 0xffffffff}, [3]uint32{0x20, 0, 0xffffffff})
	if err := unix.Setxattr(root+"/acl", pxar.XattrACLAccess, acc, 0); err != nil {
		t.Logf("no ACLs: %v", err)
	} else {
		g := uint64(4)
		acls["acl"] = storetest.Want{ACL: &pxar.ACL{Users: []pxar.ACLEntry{{ID: 1000, Perm: 4}}, GroupObj: &g}}
	}
	return acls
}

// compareTree compares the archive with the source tree at root,
// user.* xattrs included (read from the source).
func compareTree(t testing.TB, a *pxar.Accessor, root string, want map[string]storetest.Want, skip func(rel string) bool) {
	t.Helper()
	storetest.CompareTree(t, a, root, storetest.TreeOptions{Want: want, SourceXattrs: true, Skip: skip})
}

var content = storetest.Content
