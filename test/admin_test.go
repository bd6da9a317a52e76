package test

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// ramTempDir is a temporary directory on RAM when there is one: a
// store's 65,536 chunk directories are slow to make on a busy disk.
func ramTempDir(t *testing.T) string {
	t.Helper()
	return e2e.TmpfsDir(t, "cairn-e2e-")
}

func statOf(t *testing.T, path string) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestInitModes: cairn init makes a store no other user can read or lock;
// --group shares it with one group; an unknown group is a usage error.
func TestInitModes(t *testing.T) {
	t.Parallel() // a store of its own
	dir := ramTempDir(t)
	st := filepath.Join(dir, "private")
	e2e.MustCairn(t, "--store", st, "init")
	for p, want := range map[string]uint32{st: 0o700, st + "/.chunks": 0o700, st + "/.chunks/ffff": 0o700, st + "/.lock": 0o600} {
		if m := statOf(t, p).Mode &^ unix.S_IFMT; m != want {
			t.Errorf("%s: mode %o, want %o", p, m, want)
		}
	}
	for _, g := range []string{"no-such-group-cairn", "99999999", ""} {
		r := e2e.Cairn(t, nil, "--store", filepath.Join(dir, "bad"), "init", "--group", g)
		if g == "" {
			continue // --group "" is no group
		}
		if r.Code != 2 || !strings.Contains(r.Stderr, "no such group") {
			t.Errorf("init --group %q: exit %d, %q; want exit 2, no such group", g, r.Code, r.Stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "bad", ".chunks")); err == nil {
			t.Errorf("init --group %q made a store", g)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("giving a store to a group needs root")
	}
	grp, err := user.LookupGroupId(strconv.Itoa(os.Getegid()))
	if err != nil {
		t.Skip("the test's own group has no name")
	}
	st = filepath.Join(dir, "shared")
	e2e.MustCairn(t, "--store", st, "init", "--group", grp.Name)
	for p, want := range map[string]uint32{st: 0o2750, st + "/.chunks": 0o2750, st + "/.chunks/ffff": 0o2750, st + "/.lock": 0o600} {
		if s := statOf(t, p); s.Mode&^unix.S_IFMT != want || strconv.Itoa(int(s.Gid)) != grp.Gid {
			t.Errorf("%s: mode %o group %d, want %o group %s", p, s.Mode&^unix.S_IFMT, s.Gid, want, grp.Gid)
		}
	}
}

// TestBackupTimeChecks: --time far in the future, or not newer than the
// group's newest snapshot, is refused (exit 2) and leaves no snapshot.
func TestBackupTimeChecks(t *testing.T) {
	st := e2e.SharedStore(t)
	img := filepath.Join(t.TempDir(), "img")
	os.WriteFile(img, e2e.RandBytes(70000, 3), 0o644)
	backup := func(at string) e2e.Result {
		return e2e.Cairn(t, nil, "--store", st, "backup", "--type", "host", "--id", "times", "--no-sync", "--time", at, "d.img:"+img)
	}
	for _, at := range []string{"9999-12-31T00:00:00Z", time.Now().Add(25 * time.Hour).UTC().Format(time.RFC3339)} {
		if r := backup(at); r.Code != 2 || !strings.Contains(r.Stderr, "in the future") {
			t.Errorf("--time %s: exit %d, %q; want exit 2, in the future", at, r.Code, r.Stderr)
		}
	}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	if r := backup(at.Format(time.RFC3339)); r.Code != 0 {
		t.Fatalf("--time %s: exit %d, %s", at, r.Code, r.Stderr)
	}
	for _, before := range []time.Time{at.Add(-time.Second), at.Add(-30 * 24 * time.Hour), time.Unix(1547797309, 0)} {
		if r := backup(before.UTC().Format(time.RFC3339)); r.Code != 2 || !strings.Contains(r.Stderr, "not newer than the group's newest snapshot") {
			t.Errorf("--time %s: exit %d, %q; want exit 2, not newer", before, r.Code, r.Stderr)
		}
	}
	if r := backup(at.Format(time.RFC3339)); r.Code != 1 || !strings.Contains(r.Stderr, "already exists") {
		t.Errorf("--time %s again: exit %d, %q; want exit 1, already exists", at, r.Code, r.Stderr)
	}
	if r := e2e.MustCairn(t, "--store", st, "snapshots"); strings.Count(r.Stdout, "host/times/") != 1 {
		t.Errorf("snapshots after refused backups:\n%s", r.Stdout)
	}
	e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", "times", "--no-sync", "d.img:"+img) // now: newer
}

// TestBackupTimeClasses: every class of --time a new backup may not have
// is a usage error (exit 2) that makes no snapshot, also in a group with
// no snapshot yet: the zero time (which the store takes as "now"), times
// before 1970 or before PBS's oldest backup time, times that do not
// parse as RFC 3339, and times far ahead. PBS's oldest time itself is
// taken.
func TestBackupTimeClasses(t *testing.T) {
	st := e2e.SharedStore(t)
	ns, _ := e2e.UniqueNS("timeclass")
	img := filepath.Join(t.TempDir(), "img")
	os.WriteFile(img, e2e.RandBytes(70000, 4), 0o644)
	backup := func(at string) e2e.Result {
		return e2e.Cairn(t, nil, "--store", st, "backup", "--ns", ns, "--type", "host", "--id", "t", "--no-sync", "--time", at, "d.img:"+img)
	}
	for _, c := range []struct{ at, want string }{
		{"0001-01-01T00:00:00Z", "before 2019-01-18T07:41:48Z"},
		{"0001-01-01T00:00:00.000000001Z", "before 2019-01-18T07:41:48Z"},
		{"0001-01-01T01:00:00+01:00", "before 2019-01-18T07:41:48Z"},
		{"0000-01-01T00:00:00Z", "before 2019-01-18T07:41:48Z"},
		{"1969-12-31T23:59:59Z", "before 2019-01-18T07:41:48Z"},
		{"1970-01-01T00:00:00Z", "before 2019-01-18T07:41:48Z"},
		{"2001-09-09T01:46:40Z", "before 2019-01-18T07:41:48Z"},
		{"2019-01-18T07:41:47Z", "before 2019-01-18T07:41:48Z"},
		{"2019-01-18T08:41:47+01:00", "before 2019-01-18T07:41:48Z"},
		{"yesterday", "cannot parse"},
		{"2024-05-01", "cannot parse"},
		{"2024-05-01T10:00:00", "cannot parse"},
		{"2024-13-01T10:00:00Z", "month out of range"},
		{"2024-05-01 10:00:00Z", "cannot parse"},
		{"1547797308", "cannot parse"},
		{"9999-12-31T23:59:59Z", "in the future"},
		{time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339), "in the future"},
	} {
		if r := backup(c.at); r.Code != 2 || !strings.Contains(r.Stderr, "--time") || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("--time %q: exit %d, %q; want exit 2, %q", c.at, r.Code, r.Stderr, c.want)
		}
	}
	if r := e2e.MustCairn(t, "--store", st, "snapshots", "--ns", ns); strings.Contains(r.Stdout, "host/t") {
		t.Fatalf("a refused --time made a snapshot:\n%s", r.Stdout)
	}
	if r := backup("2019-01-18T07:41:48Z"); r.Code != 0 {
		t.Fatalf("--time 2019-01-18T07:41:48Z (PBS's oldest): exit %d, %s", r.Code, r.Stderr)
	}
}

// TestLockWait: a backup of a group whose lock another cairn backup holds
// fails after --lock-wait, naming the lock file and the holder's PID and
// command; one that waits long enough runs once the lock is released.
func TestLockWait(t *testing.T) {
	st := e2e.SharedStore(t)
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command(e2e.Binary(), "--store", st, "backup", "--type", "host", "--id", "lockwait", "--no-sync", "d.img:"+fifo)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // until the holder opens it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	lck := filepath.Join(st, "host/lockwait/.backup.lck")
	held := false
	for deadline := time.Now().Add(time.Minute); !held && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f, err := os.Open(lck)
		if err != nil {
			continue
		}
		held = errors.Is(unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB), unix.EWOULDBLOCK)
		f.Close()
	}
	if !held {
		t.Fatal("the first backup did not take the group lock within a minute")
	}
	if m := statOf(t, lck).Mode &^ unix.S_IFMT; m != 0o600 {
		t.Errorf("%s: mode %o, want 600", lck, m)
	}
	args := []string{"--store", st, "backup", "--type", "host", "--id", "lockwait", "--no-sync"}
	for _, wait := range []string{"0", "300ms"} {
		r := e2e.Cairn(t, nil, append(args, "--lock-wait", wait, "d.img:"+fifo)...)
		hint := "--lock-wait" // without a wait, the hint to give one
		if wait != "0" {
			hint = "gave up after waiting"
		}
		for _, want := range []string{lck, "PID " + strconv.Itoa(holder.Process.Pid), "backup --type host --id lockwait", hint} {
			if r.Code != 1 || !strings.Contains(r.Stderr, want) {
				t.Errorf("--lock-wait %s while held: exit %d, %q; want exit 1 naming %q", wait, r.Code, r.Stderr, want)
			}
		}
	}
	if r := e2e.Cairn(t, nil, append(args, "--lock-wait", "-1s", "d.img:"+fifo)...); r.Code != 2 {
		t.Errorf("--lock-wait -1s: exit %d, %q; want 2", r.Code, r.Stderr)
	}

	img := filepath.Join(t.TempDir(), "img")
	os.WriteFile(img, e2e.RandBytes(50000, 4), 0o644)
	waiter := exec.Command(e2e.Binary(), append(args, "--lock-wait", "2m", "d.img:"+img)...)
	var werr strings.Builder
	waiter.Stderr = &werr
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let it start waiting (it passes either way)
	w.Write(e2e.RandBytes(100000, 5))
	w.Close()
	if err := holder.Wait(); err != nil {
		t.Fatalf("the holding backup: %v", err)
	}
	if err := waiter.Wait(); err != nil {
		t.Fatalf("the waiting backup: %v: %s", err, werr.String())
	}
	if r := e2e.MustCairn(t, "--store", st, "snapshots"); strings.Count(r.Stdout, "host/lockwait/") != 2 {
		t.Errorf("want two snapshots of host/lockwait:\n%s", r.Stdout)
	}
}
