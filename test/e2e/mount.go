package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// NeedFUSE skips without /dev/fuse, unless CAIRN_TEST_REQUIRE_FUSE=1.
func NeedFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("CAIRN_TEST_REQUIRE_FUSE") == "1" {
			t.Fatalf("/dev/fuse is missing and CAIRN_TEST_REQUIRE_FUSE=1: %v", err)
		}
		t.Skipf("no FUSE here (/dev/fuse: %v); set CAIRN_TEST_REQUIRE_FUSE=1 to make this a failure", err)
	}
}

// MountStore runs `cairn mount [args…]` on a new directory and waits for
// its "mounted" log line; the mount is taken down when the test ends.
func MountStore(t *testing.T, st string, args ...string) string {
	t.Helper()
	NeedFUSE(t)
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

// DaemonMount runs `cairn mount --daemon --log-file LOG [args…] MNT` and
// returns the mountpoint, the daemon's pid (from the "running in the
// background" line) and the log file. The mount is taken down and the
// daemon ended when the test ends.
func DaemonMount(t *testing.T, st string, args ...string) (mnt string, pid int, log string) {
	t.Helper()
	NeedFUSE(t)
	mnt = t.TempDir()
	log = filepath.Join(t.TempDir(), "mount.log")
	r := Cairn(t, nil, append(append([]string{"--store", st, "mount", "--daemon", "--log-file", log}, args...), mnt)...)
	if r.Code != 0 {
		t.Fatalf("mount --daemon: exit %d: %s", r.Code, r.Stderr)
	}
	m := regexp.MustCompile(`msg="mount running in the background" pid=(\d+)`).FindStringSubmatch(r.Stderr)
	if m == nil {
		t.Fatalf("mount --daemon did not name its pid: %s", r.Stderr)
	}
	pid, _ = strconv.Atoi(m[1])
	t.Cleanup(func() {
		if InMountinfo(mnt) {
			Cairn(t, nil, "umount", "--lazy", mnt)
		}
		if !WaitGone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("daemon %d still running at the end of the test", pid)
		}
	})
	return mnt, pid, log
}

// InMountinfo tells whether dir is a mount point (in /proc/self/mountinfo).
func InMountinfo(dir string) bool {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// WaitGone waits up to 30 s for process pid to end (gone, or a zombie:
// the daemon is no child of ours and its new parent may not reap it).
func WaitGone(pid int) bool {
	for range 300 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if _, rest, ok := strings.Cut(string(b), ") "); ok && strings.HasPrefix(rest, "Z") {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// WaitJob polls a job status file until the job has ended; it returns
// the final status. It reads the status's own top-level state: a running
// job's result can already list a snapshot whose "state" is "ok".
func WaitJob(t *testing.T, status string) string {
	t.Helper()
	for range 600 {
		b, err := os.ReadFile(status)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); JobState(t, s) == "ok" || JobState(t, s) == "failed" {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job of %s did not end", status)
	return ""
}

// JobState is the top-level state of a job's status document.
func JobState(t *testing.T, status string) string {
	t.Helper()
	var st struct{ State string }
	DecodeJSON(t, Result{Stdout: status}, &st)
	return st.State
}
