package test

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// aclEntry is one entry of a POSIX ACL in the kernel's xattr format.
type aclEntry struct {
	tag  uint16 // ACL_USER_OBJ 1, ACL_USER 2, ACL_GROUP_OBJ 4, ACL_GROUP 8, ACL_MASK 0x10, ACL_OTHER 0x20
	perm uint16 // rwx = 4|2|1
	id   uint32
}

// setACL sets path's access ACL (entries in the kernel's order) as
// setfacl does, through system.posix_acl_access; the mode follows.
func setACL(t *testing.T, path string, ents ...aclEntry) {
	t.Helper()
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range ents {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	if err := unix.Setxattr(path, "system.posix_acl_access", b, 0); err != nil {
		t.Fatalf("set ACL of %s: %v", path, err)
	}
}

// asUser runs a command as uid with gid and groups; it returns the exit
// code and the output.
func asUser(t *testing.T, uid, gid uint32, groups []uint32, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: groups}}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("run %s as %d: %v", name, uid, err)
	}
	return 0, string(out)
}

// letUsersReach opens the directories above a mountpoint to other users:
// the test's temporary directories are 0700.
func letUsersReach(mnt string) {
	for d := mnt; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
		if filepath.Dir(d) == os.TempDir() {
			break
		}
	}
}

// TestMountACL: with --allow-other, the mount enforces a file archive's
// POSIX ACLs for other users, by their uid and groups: a named user or
// group entry that denies, a named group that allows where the mode bits
// deny, and a directory's ACL for search and listing.
func TestMountACL(t *testing.T) {
	e2e.NeedFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: files owned by other users, and commands run as them")
	}
	const (
		denied   = 60123 // user:60123:---
		other    = 60124 // no entry: "other" applies
		inDenied = 60125 // member of group 60200 (group:60200:---)
		inAllow  = 60126 // member of group 60300 (group:60300:r--)
	)
	const (
		userObj, user, groupObj, group, mask, otherTag = 1, 2, 4, 8, 0x10, 0x20
	)
	src := t.TempDir()
	files := map[string]string{"userdeny": "u", "groupdeny": "g", "groupallow": "a", "d/file": "in d", "plain": "p", "masked": "m"}
	for name, content := range files {
		p := filepath.Join(src, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(src, 0o755)
	os.Chmod(filepath.Join(src, "d"), 0o755)
	setACL(t, filepath.Join(src, "userdeny"), aclEntry{userObj, 6, 0}, aclEntry{user, 0, denied},
		aclEntry{groupObj, 4, 0}, aclEntry{mask, 4, 0}, aclEntry{otherTag, 4, 0})
	setACL(t, filepath.Join(src, "groupdeny"), aclEntry{userObj, 6, 0}, aclEntry{groupObj, 4, 0},
		aclEntry{group, 0, 60200}, aclEntry{mask, 4, 0}, aclEntry{otherTag, 4, 0})
	setACL(t, filepath.Join(src, "groupallow"), aclEntry{userObj, 6, 0}, aclEntry{groupObj, 0, 0},
		aclEntry{group, 4, 60300}, aclEntry{mask, 4, 0}, aclEntry{otherTag, 0, 0})
	// user:inAllow:r-- but mask::--- (mode 0600): the mask wins
	setACL(t, filepath.Join(src, "masked"), aclEntry{userObj, 6, 0}, aclEntry{user, 4, inAllow},
		aclEntry{groupObj, 0, 0}, aclEntry{mask, 0, 0}, aclEntry{otherTag, 0, 0})
	setACL(t, filepath.Join(src, "d"), aclEntry{userObj, 7, 0}, aclEntry{user, 0, denied},
		aclEntry{groupObj, 5, 0}, aclEntry{mask, 5, 0}, aclEntry{otherTag, 5, 0})

	st := e2e.SharedStore(t)
	e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", "acl", "--no-sync", "src.pxar:"+src)
	mnt := e2e.MountStore(t, st, "--allow-other")
	letUsersReach(mnt)
	root := filepath.Join(mnt, "host/acl/latest/src.pxar")

	type who struct {
		uid    uint32
		groups []uint32
	}
	for _, tt := range []struct {
		name string
		who  who
		ok   bool
	}{
		{"userdeny", who{denied, nil}, false},
		{"userdeny", who{other, nil}, true},
		{"groupdeny", who{inDenied, []uint32{60200}}, false},
		{"groupdeny", who{other, nil}, true},
		{"groupallow", who{inAllow, []uint32{60300}}, true},
		{"groupallow", who{other, nil}, false},
		{"groupallow", who{inDenied, []uint32{60200}}, false},
		{"plain", who{denied, nil}, true},
		{"masked", who{inAllow, nil}, false},
		{"d/file", who{denied, nil}, false}, // no search permission in d
		{"d/file", who{other, nil}, true},
	} {
		p := filepath.Join(root, tt.name)
		code, out := asUser(t, tt.who.uid, tt.who.uid, tt.who.groups, "cat", p)
		switch {
		case tt.ok && (code != 0 || out != files[tt.name]):
			t.Errorf("cat %s as %d (groups %v): exit %d, %q; want %q", tt.name, tt.who.uid, tt.who.groups, code, out, files[tt.name])
		case !tt.ok && (code == 0 || !strings.Contains(out, "Permission denied")):
			t.Errorf("cat %s as %d (groups %v): exit %d, %q; want Permission denied", tt.name, tt.who.uid, tt.who.groups, code, out)
		}
	}
	if code, out := asUser(t, denied, denied, nil, "ls", filepath.Join(root, "d")); code == 0 || !strings.Contains(out, "Permission denied") {
		t.Errorf("ls d as %d: exit %d, %q; want Permission denied", denied, code, out)
	}
	if code, out := asUser(t, other, other, nil, "ls", filepath.Join(root, "d")); code != 0 || strings.TrimSpace(out) != "file" {
		t.Errorf("ls d as %d: exit %d, %q; want file", other, code, out)
	}
	// The mount shows the ACL itself, as the source had it.
	want := make([]byte, 256)
	n, err := unix.Getxattr(filepath.Join(src, "userdeny"), "system.posix_acl_access", want)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 256)
	m, err := unix.Getxattr(filepath.Join(root, "userdeny"), "system.posix_acl_access", got)
	if err != nil || string(got[:m]) != string(want[:n]) {
		t.Errorf("ACL through the mount: %x (%v), want %x", got[:max(m, 0)], err, want[:n])
	}
}
