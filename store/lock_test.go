package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLockHelperProcess is not a test: it is the second process of the
// lock tests. It takes the group lock of CAIRN_LOCK_STORE, says "held" and
// keeps the lock until its stdin ends.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("CAIRN_LOCK_STORE")
	if dir == "" {
		t.Skip("only run by the lock tests")
	}
	s, err := Open(dir)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	l, err := s.LockGroup(context.Background(), Group{Type: TypeHost, ID: "locked"})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	l.Unlock()
	os.Exit(0)
}

// holdGroupLock starts a process that holds the group lock of host/locked;
// release (closing its stdin) makes it let go and waits for it to end.
func holdGroupLock(t *testing.T, s *Store) (pid int, release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "CAIRN_LOCK_STORE="+s.Root())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "held\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("lock helper: %q", line)
	}
	done := false
	release = func() {
		if !done {
			done = true
			stdin.Close()
			cmd.Wait()
		}
	}
	t.Cleanup(release)
	return cmd.Process.Pid, release
}

var lockedGroup = Group{Type: TypeHost, ID: "locked"}

// TestLockHeldByOther: a lock another process holds fails after the
// store's lock wait, with an error naming the lock file and the holder's
// PID, command and start time; released within the wait, it is taken.
func TestLockHeldByOther(t *testing.T) {
	s := testStore(t)
	pid, release := holdGroupLock(t, s)
	lockPath := filepath.Join(s.GroupPath(lockedGroup), ".backup.lck")

	for _, wait := range []time.Duration{0, 300 * time.Millisecond} {
		s.SetLockWait(wait)
		_, err := s.StartBackup(t.Context(), lockedGroup, time.Time{})
		var le *LockedError
		if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
			t.Fatalf("wait %s: %v, want a LockedError", wait, err)
		}
		msg := err.Error()
		for _, want := range []string{lockPath, "PID " + strconv.Itoa(pid), "TestLockHelperProcess", "started "} {
			if !strings.Contains(msg, want) {
				t.Errorf("wait %s: error %q does not name %q", wait, msg, want)
			}
		}
		if len(le.Holders) != 1 || le.Holders[0].PID != pid || le.Holders[0].Started.IsZero() {
			t.Errorf("holders %+v, want PID %d with a start time", le.Holders, pid)
		}
		if le.Waited < wait {
			t.Errorf("gave up after %s, before the lock wait of %s", le.Waited, wait)
		}
	}

	// The holder's record in the lock file names it too.
	rec, _ := os.ReadFile(lockPath)
	if !strings.HasPrefix(string(rec), "pid="+strconv.Itoa(pid)+" ") {
		t.Errorf("lock file records %q, want pid=%d", rec, pid)
	}

	// A cancelled wait says so.
	s.SetLockWait(time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.StartBackup(ctx, lockedGroup, time.Time{}); !errors.Is(err, ErrLocked) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}

	// Released while waited for: taken.
	got := make(chan error, 1)
	go func() {
		b, err := s.StartBackup(t.Context(), lockedGroup, time.Time{})
		if err == nil {
			b.unlock()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("took a held lock: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	if err := <-got; err != nil {
		t.Fatalf("lock released within the wait: %v", err)
	}
}

// TestLockFiles: lock files are 0600 in a private store, a lock file that
// is more open is narrowed, and one that is a symlink or not a regular
// file is refused without touching what it points to.
func TestLockFiles(t *testing.T) {
	s := testStore(t)
	l, err := s.LockGroup(t.Context(), lockedGroup)
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	lockPath := filepath.Join(s.GroupPath(lockedGroup), ".backup.lck")
	for _, p := range []string{lockPath, filepath.Join(s.Root(), lockFile)} {
		if m := modeOf(t, p); m != 0o600 {
			t.Errorf("%s: mode %o, want 600", p, m)
		}
	}
	os.Chmod(lockPath, 0o666)
	if l, err = s.LockGroup(t.Context(), lockedGroup); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if m := modeOf(t, lockPath); m != 0o600 {
		t.Errorf("an old lock file of mode 666 is %o after use, want 600", m)
	}

	victim := filepath.Join(t.TempDir(), "victim")
	os.Remove(lockPath)
	os.Symlink(victim, lockPath)
	if _, err := s.LockGroup(t.Context(), lockedGroup); err == nil || !strings.Contains(err.Error(), lockPath) {
		t.Errorf("lock through a symlink: %v", err)
	}
	if _, err := os.Lstat(victim); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("locking through a symlink created its target: %v", err)
	}
	os.Remove(lockPath)
	if err := unix.Mkfifo(lockPath, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LockGroup(t.Context(), lockedGroup); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("lock on a FIFO: %v", err)
	}
}

func modeOf(t *testing.T, path string) uint32 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Mode &^ unix.S_IFMT
}

// TestCreateModes: a new store is 0700 with 0700 chunk directories and a
// 0600 lock file; shared with a group, 2750 directories of that group and
// still 0600 lock files.
func TestCreateModes(t *testing.T) {
	old := unix.Umask(0o022)
	defer unix.Umask(old)
	dir := filepath.Join(ramDir(t), "private")
	s, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]uint32{dir: 0o700, filepath.Join(dir, chunkDir): 0o700,
		filepath.Join(dir, chunkDir, "abcd"): 0o700, filepath.Join(dir, lockFile): 0o600} {
		if m := modeOf(t, p); m != want {
			t.Errorf("%s: mode %o, want %o", p, m, want)
		}
	}
	s.Close()
	if os.Geteuid() != 0 {
		t.Skip("giving a store to a group needs root")
	}
	gid := 60400
	unix.Umask(0o077) // the group's bits are set whatever the umask
	dir = filepath.Join(ramDir(t), "shared")
	if _, err := CreateWith(dir, CreateOptions{Group: &gid, LazyPrefixDirs: false}); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.LockGroup(t.Context(), lockedGroup)
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	for p, want := range map[string]uint32{dir: 0o2750, filepath.Join(dir, chunkDir): 0o2750,
		filepath.Join(dir, chunkDir, "abcd"): 0o2750, filepath.Join(dir, lockFile): 0o600,
		filepath.Join(s.GroupPath(lockedGroup), ".backup.lck"): 0o600} {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		if m := st.Mode &^ unix.S_IFMT; m != want || st.Gid != uint32(gid) {
			t.Errorf("%s: mode %o group %d, want %o group %d", p, m, st.Gid, want, gid)
		}
	}
}

// ramDir is a temporary directory on RAM when there is one: a store's
// 65,536 chunk directories are slow to make on a busy disk.
func ramDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "cairn-store-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestUnlockWithCopies: Unlock releases the flock though another
// descriptor shares the open file (as a child forked by another
// goroutine does until it execs): a close alone left it held.
func TestUnlockWithCopies(t *testing.T) {
	s := testStore(t)
	snap := Snapshot{Group: Group{Type: TypeVM, ID: "1"}, Time: day(1)}
	if err := os.MkdirAll(s.SnapshotPath(snap), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, lock := range []func() (*Lock, error){
		func() (*Lock, error) { return s.lockSnapshot(context.Background(), snap, true, 0) },
		func() (*Lock, error) { return s.flock(context.Background(), filepath.Join(s.root, ".lock"), true, 0) },
	} {
		l, err := lock()
		if err != nil {
			t.Fatal(err)
		}
		dup, err := unix.Dup(int(l.f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		path := l.f.Name()
		l.Unlock()
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Errorf("%s: still locked after Unlock while a copy of the descriptor is open: %v", path, err)
		}
		unix.Close(fd)
		unix.Close(dup)
	}
}
