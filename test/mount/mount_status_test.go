package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestMountStatusFilesPrivate: under --allow-other, the mount's .stats
// and the status and log files of .jobs (they name snapshots, paths and
// errors) are 0400 owned by the mounting user, so another user's read
// is refused (EACCES) while the mounting user reads them; --status-mode
// 0440 lets the mounting user's group in, 0444 everyone.
func TestMountStatusFilesPrivate(t *testing.T) {
	e2e.NeedFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: readers run as other users")
	}
	const other, inGroup = 60141, 60142 // inGroup is a member of the mounting user's group
	st := e2e.SharedStore(t)
	gid := uint32(os.Getegid())
	for _, tt := range []struct {
		args             []string
		mode             uint32
		otherOK, groupOK bool
	}{
		{nil, 0o400, false, false},
		{[]string{"--status-mode", "0440"}, 0o440, false, true},
		{[]string{"--status-mode", "0444"}, 0o444, true, true},
	} {
		mnt := e2e.MountStore(t, st, append([]string{"--allow-other"}, tt.args...)...)
		letUsersReach(mnt)
		for _, f := range []string{".stats", ".jobs/status", ".jobs/verify/status", ".jobs/verify/log", ".jobs/gc/status"} {
			p := filepath.Join(mnt, f)
			var fi unix.Stat_t
			if err := unix.Stat(p, &fi); err != nil || fi.Mode != unix.S_IFREG|tt.mode || fi.Uid != uint32(os.Geteuid()) || fi.Gid != gid {
				t.Errorf("%q %s: mode %o owner %d:%d (%v), want %o owned by %d:%d", tt.args, f, fi.Mode, fi.Uid, fi.Gid, err,
					unix.S_IFREG|tt.mode, os.Geteuid(), gid)
			}
			if _, err := os.ReadFile(p); err != nil {
				t.Errorf("%q: the mounting user reads %s: %v", tt.args, f, err)
			}
			for _, r := range []struct {
				uid    uint32
				groups []uint32
				ok     bool
			}{{other, nil, tt.otherOK}, {inGroup, []uint32{gid}, tt.groupOK}} {
				code, out := asUser(t, r.uid, r.uid, r.groups, "cat", p)
				if r.ok != (code == 0) || !r.ok && !strings.Contains(out, "Permission denied") {
					t.Errorf("%q: cat %s as %d (groups %v): exit %d, %q; want readable %v", tt.args, f, r.uid, r.groups, code, out, r.ok)
				}
			}
		}
	}
	// A bad --status-mode is a usage error.
	for _, mode := range []string{"0644", "0", "0500", "abc", "04400"} {
		if r := e2e.Cairn(t, nil, "--store", st, "mount", "--status-mode", mode, t.TempDir()); r.Code != 2 || !strings.Contains(r.Stderr, "--status-mode") {
			t.Errorf("--status-mode %s: exit %d, %q; want 2", mode, r.Code, r.Stderr)
		}
	}
}
