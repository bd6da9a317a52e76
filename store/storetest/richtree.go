package storetest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

const undef = 0xffffffff // ACL_UNDEFINED_ID

// RichTree makes a source tree at root with every entry kind, odd
// names, sparse, large and empty files, hard links across directories,
// and xattrs, ACLs and file capabilities where the file system takes
// them. It returns the metadata beyond stat that it managed to set, by
// relative path, for CompareTree.
func RichTree(t testing.TB, root string) map[string]Want {
	extra := map[string]Want{}
	writeFile(t, root+"/plain", "hello world\n")
	writeFile(t, root+"/empty", "")
	writeFile(t, root+"/with space", "s")
	writeFile(t, root+"/new\nline", "n")
	writeFile(t, root+"/bad\xff\xfeutf8", "u")
	writeFile(t, root+"/"+strings.Repeat("L", 255), "long name")
	writeFile(t, root+"/a/b/c/d/e/f/g/h/i/j/deep", "deep")
	writeFile(t, root+"/big", string(RandSeeded(3<<20+11, 1)))
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
	must(t, os.MkdirAll(root+"/emptydir", 0o700))
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
		extra["xattr"] = Want{Xattrs: []pxar.Xattr{{Name: []byte("user.a"), Value: []byte{}}, {Name: []byte("user.b"), Value: []byte("two")}}}
	}
	writeFile(t, root+"/acl", "acl")
	acc := ACLXattr([3]uint32{0x01, 6, undef}, [3]uint32{0x02, 4, 1000}, [3]uint32{0x04, 4, undef},
		[3]uint32{0x08, 6, 50}, [3]uint32{0x10, 6, undef}, [3]uint32{0x20, 0, undef})
	if err := unix.Setxattr(root+"/acl", pxar.XattrACLAccess, acc, 0); err != nil {
		t.Logf("no ACLs: %v", err)
	} else {
		g := uint64(4)
		extra["acl"] = Want{ACL: &pxar.ACL{Users: []pxar.ACLEntry{{ID: 1000, Perm: 4}}, Groups: []pxar.ACLEntry{{ID: 50, Perm: 6}}, GroupObj: &g}}
		must(t, os.MkdirAll(root+"/acldir", 0o755))
		def := ACLXattr([3]uint32{0x01, 7, undef}, [3]uint32{0x02, 7, 2000}, [3]uint32{0x04, 5, undef},
			[3]uint32{0x10, 7, undef}, [3]uint32{0x20, 0, undef})
		must(t, unix.Setxattr(root+"/acldir", pxar.XattrACLDefault, def, 0))
		extra["acldir"] = Want{ACL: &pxar.ACL{Default: &pxar.ACLDefault{UserObj: 7, GroupObj: 5, Other: 0, Mask: 7},
			DefaultUsers: []pxar.ACLEntry{{ID: 2000, Perm: 7}}}}
	}
	writeFile(t, root+"/fcaps", "caps")
	caps := binary.LittleEndian.AppendUint32(nil, 0x02000001) // VFS_CAP_REVISION_2 | effective
	caps = binary.LittleEndian.AppendUint32(caps, 1<<10)      // CAP_NET_BIND_SERVICE permitted
	caps = append(caps, make([]byte, 12)...)
	if err := unix.Setxattr(root+"/fcaps", pxar.XattrFCaps, caps, 0); err != nil {
		t.Logf("no file capabilities: %v", err)
	} else {
		extra["fcaps"] = Want{FCaps: caps}
	}
	return extra
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(data), 0o644))
}
