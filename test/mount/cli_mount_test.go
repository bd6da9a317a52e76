package test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// imageGroup backs up a small image as host/ID and returns its contents.
func imageGroup(t *testing.T, st, id string) []byte {
	t.Helper()
	img, data := e2e.SparseImage(t, 256<<10, 41)
	e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", id, "--no-sync", "disk.img:"+img)
	return data
}

// TestCLIMountDaemon: `mount --daemon` returns once the mount is ready and
// leaves it served by a detached process (own session, stdin /dev/null,
// log in --log-file), which ends on `cairn umount`, on SIGTERM and on an
// unmount from outside; a mount that fails exits with its error and code
// and leaves nothing behind.
func TestCLIMountDaemon(t *testing.T) {
	e2e.NeedFUSE(t)
	st := e2e.SharedStore(t)
	data := imageGroup(t, st, "cli-daemon")

	check := func(t *testing.T, mnt string, pid int) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(mnt, "host", "cli-daemon", "latest", "disk.img"))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("image read through the daemon's mount: %d bytes, %v", len(got), err)
		}
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		_, rest, _ := strings.Cut(string(stat), ") ")
		if f := strings.Fields(rest); len(f) < 4 || f[3] != strconv.Itoa(pid) {
			t.Errorf("daemon %d is not the leader of its own session: stat %q", pid, rest)
		}
		if in, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/0"); in != os.DevNull {
			t.Errorf("daemon's stdin is %q, want %s", in, os.DevNull)
		}
		if cwd, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); cwd != "/" {
			t.Errorf("daemon's working directory is %q, want /", cwd)
		}
	}
	ended := func(t *testing.T, mnt string, pid int, log, want string) {
		t.Helper()
		if !e2e.WaitGone(pid) {
			t.Fatalf("daemon %d did not end", pid)
		}
		if e2e.InMountinfo(mnt) {
			t.Fatalf("%s is still mounted after the daemon ended", mnt)
		}
		b, _ := os.ReadFile(log)
		if !strings.Contains(string(b), "msg=\"serving in the background\"") || !strings.Contains(string(b), want) {
			t.Fatalf("daemon log lacks the mount and %q:\n%s", want, b)
		}
	}

	t.Run("umount", func(t *testing.T) {
		mnt, pid, log := e2e.DaemonMount(t, st)
		check(t, mnt, pid)
		e2e.MustCairn(t, "umount", mnt)
		ended(t, mnt, pid, log, "unmounted from outside")
	})
	t.Run("sigterm", func(t *testing.T) {
		mnt, pid, log := e2e.DaemonMount(t, st, "--stats")
		check(t, mnt, pid)
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		ended(t, mnt, pid, log, "msg=unmounting")
		if b, _ := os.ReadFile(log); !strings.Contains(string(b), `"served_bytes"`) {
			t.Errorf("--stats did not go to the log file:\n%s", b)
		}
	})
	t.Run("umount -R", func(t *testing.T) {
		mnt, pid, log := e2e.DaemonMount(t, st)
		if out, err := exec.Command("umount", "-R", mnt).CombinedOutput(); err != nil {
			t.Fatalf("umount -R: %v: %s", err, out)
		}
		ended(t, mnt, pid, log, "unmounted from outside")
	})
	t.Run("fails", func(t *testing.T) {
		busy := t.TempDir()
		os.WriteFile(filepath.Join(busy, "x"), nil, 0o644)
		log := filepath.Join(t.TempDir(), "log")
		r := e2e.Cairn(t, nil, "--store", st, "mount", "--daemon", "--log-file", log, busy)
		if r.Code != 1 || !strings.Contains(r.Stderr, "not empty") || e2e.InMountinfo(busy) {
			t.Fatalf("mount --daemon on a non-empty directory: exit %d, mounted %v: %s", r.Code, e2e.InMountinfo(busy), r.Stderr)
		}
		if strings.Count(r.Stderr, "cairn: ") != 1 {
			t.Errorf("the error should be printed once:\n%s", r.Stderr)
		}
		r = e2e.Cairn(t, nil, "--store", st, "mount", "--daemon", "--image-mode", "0777", t.TempDir())
		if r.Code != 2 || !strings.Contains(r.Stderr, "--image-mode") {
			t.Fatalf("mount --daemon --image-mode 0777: exit %d (want 2): %s", r.Code, r.Stderr)
		}
		r = e2e.Cairn(t, nil, "--store", st, "mount", "--log-file", log, t.TempDir())
		if r.Code != 2 || !strings.Contains(r.Stderr, "--log-file") {
			t.Fatalf("mount --log-file without --daemon: exit %d (want 2): %s", r.Code, r.Stderr)
		}
		r = e2e.Cairn(t, nil, "--store", st, "mount", "--daemon", "--log-file", t.TempDir(), t.TempDir())
		if r.Code != 1 || !strings.Contains(r.Stderr, "--log-file") {
			t.Fatalf("mount --daemon --log-file DIR: exit %d (want 1): %s", r.Code, r.Stderr)
		}
	})
}

// dfFigures runs df -B1 on path and returns the named columns.
func dfFigures(t *testing.T, path string, cols ...string) []uint64 {
	t.Helper()
	args := []string{"-B1", "--output=" + strings.Join(cols, ","), path}
	out, err := exec.Command("df", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("df %v: %v: %s", args, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) != len(cols) {
		t.Fatalf("df %v: %q", args, out)
	}
	var v []uint64
	for _, s := range f {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("df %v: %q: %v", args, out, err)
		}
		v = append(v, n)
	}
	return v
}

// TestCLIMountStatfs: df on the mount (its root and a file deep inside)
// shows the size, used and available space and the inode counts of the
// file system holding the store. Other tests write to that file system
// meanwhile, so what changes is checked to lie between statfs of the
// store taken before and after df (widened by 256 MiB of writes).
func TestCLIMountStatfs(t *testing.T) {
	st := e2e.SharedStore(t)
	imageGroup(t, st, "cli-statfs")
	mnt := e2e.MountStore(t, st)
	storeFS := func() unix.Statfs_t {
		var s unix.Statfs_t
		if err := unix.Statfs(st, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	between := func(what string, got, a, b uint64) {
		t.Helper()
		const slack = 256 << 20
		lo, hi := min(a, b), max(a, b)
		if got+slack < lo || got > hi+slack {
			t.Errorf("%s: df shows %d, the store's file system %d..%d", what, got, lo, hi)
		}
	}
	for _, p := range []string{mnt, filepath.Join(mnt, "host", "cli-statfs", "latest", "disk.img")} {
		before := storeFS()
		v := dfFigures(t, p, "size", "used", "avail")
		after := storeFS()
		bs := uint64(before.Frsize)
		if v[0] != before.Blocks*bs || v[0] == 0 {
			t.Errorf("df %s: size %d, want the store's %d", p, v[0], before.Blocks*bs)
		}
		between("used of "+p, v[1], (before.Blocks-before.Bfree)*bs, (after.Blocks-after.Bfree)*bs)
		between("avail of "+p, v[2], before.Bavail*bs, after.Bavail*bs)
		var m unix.Statfs_t
		if err := unix.Statfs(p, &m); err != nil || m.Frsize != before.Frsize || m.Bsize != before.Bsize {
			t.Errorf("statfs %s: block size %d/%d, want the store's %d/%d (%v)", p, m.Frsize, m.Bsize, before.Frsize, before.Bsize, err)
		}
		before = storeFS()
		iv := dfFigures(t, p, "itotal", "iavail")
		after = storeFS()
		between("inodes of "+p, iv[0], before.Files, after.Files)
		between("free inodes of "+p, iv[1], before.Ffree, after.Ffree)
	}
}

// sizeIsContent checks that stat of a generated file gives the length of
// what reading it gives, and returns the content.
func sizeIsContent(t *testing.T, path string) []byte {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(b)) {
		t.Fatalf("%s: stat says %d bytes, reading gives %d", path, fi.Size(), len(b))
	}
	return b
}

// TestCLIMountJobFiles: .jobs/*/status and log have their real size in
// stat (refreshed at once, not after the attribute timeout), a reader
// waiting at the end of the log gets the lines added since, and
// `tail -f` follows the log.
func TestCLIMountJobFiles(t *testing.T) {
	st := e2e.SharedStore(t)
	imageGroup(t, st, "cli-jobfiles")
	mnt := e2e.MountStore(t, st)
	jobs := filepath.Join(mnt, ".jobs")
	logPath := filepath.Join(jobs, "verify", "log")
	statusPath := filepath.Join(jobs, "verify", "status")

	idle := sizeIsContent(t, statusPath)
	sizeIsContent(t, filepath.Join(jobs, "status"))
	sizeIsContent(t, filepath.Join(mnt, ".stats"))
	if b := sizeIsContent(t, logPath); len(b) != 0 {
		t.Fatalf("log before any job: %q", b)
	}
	held, err := os.Open(logPath) // a reader at the (empty) end of the log
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if n, _ := held.Read(make([]byte, 10)); n != 0 {
		t.Fatalf("read %d bytes of an empty log", n)
	}
	tail := exec.Command("tail", "-n", "+1", "-f", logPath)
	tailOut, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { tail.Process.Kill(); tail.Wait() }()

	ctl := filepath.Join(jobs, "verify", "control")
	if err := os.WriteFile(ctl, []byte("start snapshots=host/cli-jobfiles\n"), 0); err != nil {
		t.Fatal(err)
	}
	final := e2e.WaitJob(t, statusPath)
	if got := sizeIsContent(t, statusPath); string(got) != final || bytes.Equal(got, idle) {
		t.Fatalf("status after the job (stat size checked):\n%s\nidle was:\n%s", got, idle)
	}
	log := sizeIsContent(t, logPath)
	if len(log) == 0 || log[len(log)-1] != '\n' {
		t.Fatalf("log after the job: %q", log)
	}
	fi, _ := held.Stat()
	rest, _ := io.ReadAll(held)
	if fi.Size() != int64(len(log)) || !bytes.Equal(rest, log) {
		t.Fatalf("reader held at the end: fstat %d, then read %q; want %d bytes %q", fi.Size(), rest, len(log), log)
	}
	if out, err := exec.Command("tail", "-c", "+1", logPath).Output(); err != nil || !bytes.Equal(out, log) {
		t.Fatalf("tail -c +1: %q, %v; want %q", out, err, log)
	}
	// tail -f checks the size every second (FUSE has no inotify events)
	// and reads what was added: the whole log, line by line.
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(tailOut)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
			if b.Len() >= len(log) {
				break
			}
		}
		got <- b.String()
	}()
	select {
	case s := <-got:
		if s != string(log) {
			t.Fatalf("tail -f gave %q, want %q", s, log)
		}
	case <-time.After(time.Minute):
		t.Fatalf("tail -f did not show the log's %d bytes within a minute", len(log))
	}
}
