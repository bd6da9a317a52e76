package test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// daemonMount runs `cairn mount --daemon --log-file LOG [args…] MNT` and
// returns the mountpoint, the daemon's pid (from the "running in the
// background" line) and the log file. The mount is taken down and the
// daemon ended when the test ends.
func daemonMount(t *testing.T, st string, args ...string) (mnt string, pid int, log string) {
	t.Helper()
	needFUSE(t)
	mnt = t.TempDir()
	log = filepath.Join(t.TempDir(), "mount.log")
	r := cairn(t, nil, append(append([]string{"--store", st, "mount", "--daemon", "--log-file", log}, args...), mnt)...)
	if r.code != 0 {
		t.Fatalf("mount --daemon: exit %d: %s", r.code, r.stderr)
	}
	m := regexp.MustCompile(`msg="mount running in the background" pid=(\d+)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("mount --daemon did not name its pid: %s", r.stderr)
	}
	pid, _ = strconv.Atoi(m[1])
	t.Cleanup(func() {
		if inMountinfo(mnt) {
			cairn(t, nil, "umount", "--lazy", mnt)
		}
		if !waitGone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("daemon %d still running at the end of the test", pid)
		}
	})
	return mnt, pid, log
}

// inMountinfo tells whether dir is a mount point (in /proc/self/mountinfo).
func inMountinfo(dir string) bool {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// waitGone waits up to 30 s for process pid to end (gone, or a zombie:
// the daemon is no child of ours and its new parent may not reap it).
func waitGone(pid int) bool {
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

// imageGroup backs up a small image as host/ID and returns its contents.
func imageGroup(t *testing.T, st, id string) []byte {
	t.Helper()
	img, data := sparseImage(t, 256<<10, 41)
	mustCairn(t, "--store", st, "backup", "--type", "host", "--id", id, "--no-sync", "disk.img:"+img)
	return data
}

// TestCLIMountDaemon: `mount --daemon` returns once the mount is ready and
// leaves it served by a detached process (own session, stdin /dev/null,
// log in --log-file), which ends on `cairn umount`, on SIGTERM and on an
// unmount from outside; a mount that fails exits with its error and code
// and leaves nothing behind.
func TestCLIMountDaemon(t *testing.T) {
	needFUSE(t)
	st := sharedStore(t)
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
		if !waitGone(pid) {
			t.Fatalf("daemon %d did not end", pid)
		}
		if inMountinfo(mnt) {
			t.Fatalf("%s is still mounted after the daemon ended", mnt)
		}
		b, _ := os.ReadFile(log)
		if !strings.Contains(string(b), "msg=\"serving in the background\"") || !strings.Contains(string(b), want) {
			t.Fatalf("daemon log lacks the mount and %q:\n%s", want, b)
		}
	}

	t.Run("umount", func(t *testing.T) {
		mnt, pid, log := daemonMount(t, st)
		check(t, mnt, pid)
		mustCairn(t, "umount", mnt)
		ended(t, mnt, pid, log, "unmounted from outside")
	})
	t.Run("sigterm", func(t *testing.T) {
		mnt, pid, log := daemonMount(t, st, "--stats")
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
		mnt, pid, log := daemonMount(t, st)
		if out, err := exec.Command("umount", "-R", mnt).CombinedOutput(); err != nil {
			t.Fatalf("umount -R: %v: %s", err, out)
		}
		ended(t, mnt, pid, log, "unmounted from outside")
	})
	t.Run("fails", func(t *testing.T) {
		busy := t.TempDir()
		os.WriteFile(filepath.Join(busy, "x"), nil, 0o644)
		log := filepath.Join(t.TempDir(), "log")
		r := cairn(t, nil, "--store", st, "mount", "--daemon", "--log-file", log, busy)
		if r.code != 1 || !strings.Contains(r.stderr, "not empty") || inMountinfo(busy) {
			t.Fatalf("mount --daemon on a non-empty directory: exit %d, mounted %v: %s", r.code, inMountinfo(busy), r.stderr)
		}
		if strings.Count(r.stderr, "cairn: ") != 1 {
			t.Errorf("the error should be printed once:\n%s", r.stderr)
		}
		r = cairn(t, nil, "--store", st, "mount", "--daemon", "--image-mode", "0777", t.TempDir())
		if r.code != 2 || !strings.Contains(r.stderr, "--image-mode") {
			t.Fatalf("mount --daemon --image-mode 0777: exit %d (want 2): %s", r.code, r.stderr)
		}
		r = cairn(t, nil, "--store", st, "mount", "--log-file", log, t.TempDir())
		if r.code != 2 || !strings.Contains(r.stderr, "--log-file") {
			t.Fatalf("mount --log-file without --daemon: exit %d (want 2): %s", r.code, r.stderr)
		}
		r = cairn(t, nil, "--store", st, "mount", "--daemon", "--log-file", t.TempDir(), t.TempDir())
		if r.code != 1 || !strings.Contains(r.stderr, "--log-file") {
			t.Fatalf("mount --daemon --log-file DIR: exit %d (want 1): %s", r.code, r.stderr)
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
	st := sharedStore(t)
	imageGroup(t, st, "cli-statfs")
	mnt := mountStore(t, st)
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

// waitJob polls a job status file until the job has ended; it returns
// the final status.
func waitJob(t *testing.T, status string) string {
	t.Helper()
	for range 600 {
		b, err := os.ReadFile(status)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); strings.Contains(s, `"state": "ok"`) || strings.Contains(s, `"state": "failed"`) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job of %s did not end", status)
	return ""
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
	st := sharedStore(t)
	imageGroup(t, st, "cli-jobfiles")
	mnt := mountStore(t, st)
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
	final := waitJob(t, statusPath)
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

// needLoop skips without loop devices or the tools of the loop recipe,
// unless CAIRN_TEST_REQUIRE_FUSE=1 (CI), where that is a failure.
func needLoop(t *testing.T) {
	t.Helper()
	var missing []string
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		missing = append(missing, "/dev/loop-control (loop devices)")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	if os.Getenv("CAIRN_TEST_REQUIRE_FUSE") == "1" {
		t.Fatalf("missing %s and CAIRN_TEST_REQUIRE_FUSE=1 (install e2fsprogs and mount; modprobe loop)", strings.Join(missing, ", "))
	}
	t.Skipf("missing %s; set CAIRN_TEST_REQUIRE_FUSE=1 to make this a failure", strings.Join(missing, ", "))
}

// partitionedImage writes a disk image with an MBR partition table whose
// one Linux partition (from 1 MiB, partSize bytes) holds an ext4 file
// system made from src, as a VM's disk would be.
func partitionedImage(t *testing.T, src string, partSize int64) string {
	t.Helper()
	const start = 1 << 20
	img := filepath.Join(t.TempDir(), "disk.raw")
	mbr := make([]byte, 512)
	e := mbr[446:462]
	e[4] = 0x83 // Linux
	binary.LittleEndian.PutUint32(e[8:], start/512)
	binary.LittleEndian.PutUint32(e[12:], uint32(partSize/512))
	mbr[510], mbr[511] = 0x55, 0xaa
	if err := os.WriteFile(img, mbr, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, start+partSize); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-E", "offset="+strconv.Itoa(start), "-d", src, img, strconv.FormatInt(partSize>>10, 10)+"k").CombinedOutput()
	if err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	return img
}

// runTool runs a command and returns its trimmed output, failing the test
// when it fails.
func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestCLIMountLoopImage is the README's recipe for browsing a file system
// inside a backed-up disk image: the image in the mount is attached
// read-only to a loop device and its partition mounted read-only, either
// through the partition's own device (losetup -P, or partx -a where no
// udev makes the nodes) or through a loop device limited to the
// partition (losetup -o --sizelimit).
func TestCLIMountLoopImage(t *testing.T) {
	needFUSE(t)
	needLoop(t)
	st := sharedStore(t)
	src := filepath.Join(t.TempDir(), "src")
	files := map[string]string{"etc/hostname": "vm100\n", "home/u/notes.txt": strings.Repeat("notes ", 3000), "data/random.bin": string(randBytes(200<<10, 9))}
	writeTree(t, src, files)
	const partSize = 8 << 20
	img := partitionedImage(t, src, partSize)
	mustCairn(t, "--store", st, "backup", "--type", "host", "--id", "cli-loop", "--no-sync", "disk.img:"+img)
	mnt := mountStore(t, st)
	disk := filepath.Join(mnt, "host", "cli-loop", "latest", "disk.img")

	attach := map[string]func(t *testing.T) string{
		"partscan": func(t *testing.T) string {
			dev := runTool(t, "losetup", "-r", "-P", "-f", "--show", disk)
			t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
			if _, err := os.Stat(dev + "p1"); err != nil {
				// no udev here: the table was read, the node not made
				t.Logf("%sp1 missing after losetup -P (%v): adding it with partx -a", dev, err)
				runTool(t, "partx", "-a", dev)
			}
			return dev + "p1"
		},
		"offset": func(t *testing.T) string {
			dev := runTool(t, "losetup", "-r", "-o", strconv.Itoa(1<<20), "--sizelimit", strconv.Itoa(partSize), "-f", "--show", disk)
			t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
			return dev
		},
	}
	for _, how := range []string{"partscan", "offset"} {
		t.Run(how, func(t *testing.T) {
			dev := attach[how](t)
			dir := t.TempDir()
			runTool(t, "mount", "-o", "ro", dev, dir)
			t.Cleanup(func() { exec.Command("umount", dir).Run() })
			for name, want := range files {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != want {
					t.Errorf("%s in the image's file system: %d bytes, %v; want %d bytes", name, len(got), err, len(want))
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
				t.Errorf("writing into the read-only file system: %v, want EROFS", err)
			}
		})
	}
}
