package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// The command line's contract, continued: -q/-v/--log-format and
// --lock-wait on jobs, --ns, completion, man pages and make install.

// TestCLIContractJobs runs gc and verify on a store of its own: -q, -v
// and --log-format, then --lock-wait while their locks are held.
func TestCLIContractJobs(t *testing.T) {
	t.Parallel()
	st := contractStore(t)
	t.Run("log", func(t *testing.T) { checkQuietVerboseJSONLog(t, st) })
	t.Run("lock-wait", func(t *testing.T) { checkLockWait(t, st) })
}

func checkQuietVerboseJSONLog(t *testing.T, st string) {
	img := filepath.Join(t.TempDir(), "img")
	os.WriteFile(img, e2e.RandBytes(300000, 21), 0o644)
	r := e2e.MustCairn(t, "--store", st, "backup", "-q", "--id", "q", "--type", "host", "d.img:"+img)
	if r.Stderr != "" {
		t.Errorf("backup -q wrote to stderr: %q", r.Stderr)
	}
	r = e2e.MustCairn(t, "--store", st, "gc", "-q")
	if r.Stderr != "" || r.Stdout != "" {
		t.Errorf("gc -q printed: stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	// gc logs its phases at Info (-v): as JSON, each line parses.
	r = e2e.MustCairn(t, "--store", st, "gc", "-v", "--log-format", "json")
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if r.Stderr == "" || len(lines) == 0 {
		t.Fatal("gc --log-format json logged nothing")
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["msg"] == nil || m["level"] == nil {
			t.Errorf("gc --log-format json: line %q is no slog JSON record (%v)", l, err)
		}
	}
	// verify logs at Warn; -v adds its Info lines, -vv its Debug ones.
	quiet := e2e.Cairn(t, nil, "--store", st, "verify", "host/q")
	verbose := e2e.Cairn(t, nil, "--store", st, "verify", "-v", "host/q")
	if quiet.Code != 0 || verbose.Code != 0 {
		t.Fatalf("verify: exit %d, -v: exit %d\n%s%s", quiet.Code, verbose.Code, quiet.Stderr, verbose.Stderr)
	}
	if strings.Count(verbose.Stderr, "level=INFO") == 0 || strings.Contains(quiet.Stderr, "level=INFO") {
		t.Errorf("-v adds no Info lines:\nwithout: %s\nwith: %s", quiet.Stderr, verbose.Stderr)
	}
	vv := e2e.MustCairn(t, "--store", st, "verify", "-vv", "--json", "host/q")
	var status map[string]any
	if err := json.Unmarshal([]byte(vv.Stdout), &status); err != nil {
		t.Errorf("verify -vv --json: stdout is no JSON (%v): %s", err, vv.Stdout)
	}
	if r := e2e.MustCairn(t, "--store", st, "verify", "-q", "host/q"); strings.Contains(r.Stderr, "level=") {
		t.Errorf("verify -q logged: %s", r.Stderr)
	}
}

// checkLockWait holds a job kind's lock from this process, as a running
// job of that kind in another process does.
func checkLockWait(t *testing.T, st string) {
	for _, kind := range []struct{ name, lock string }{{"gc", ".job-gc.lck"}, {"verify", ".job-verify.lck"}} {
		lock := filepath.Join(st, kind.lock)
		f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		r := e2e.Cairn(t, nil, "--store", st, kind.name, "--lock-wait", "300ms")
		for _, want := range []string{"already running", fmt.Sprintf("PID %d", os.Getpid()), "gave up after waiting"} {
			if r.Code != 1 || !strings.Contains(r.Stderr, want) {
				t.Errorf("%s while its lock is held: exit %d, want 1 and %q\n%s", kind.name, r.Code, want, r.Stderr)
			}
		}
		r = e2e.Cairn(t, nil, "--store", st, kind.name)
		if r.Code != 1 || !strings.Contains(r.Stderr, "--lock-wait DURATION") {
			t.Errorf("%s without --lock-wait: exit %d, want 1 with the hint\n%s", kind.name, r.Code, r.Stderr)
		}
		// Waiting: the lock is let go once the process has its lock file open.
		cmd, stderr, exited := startCairn(t, "--store", st, kind.name, "--lock-wait", "5m", "-q")
		waitFor(t, exited, func() bool { return hasOpen(cmd.Process.Pid, lock) })
		f.Close()
		if err := <-exited; err != nil {
			t.Errorf("%s --lock-wait 5m after the holder let go: %v\n%s", kind.name, err, stderr.String())
		}
	}
}

// hasOpen reports whether process pid has file path open.
func hasOpen(pid int, path string) bool {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); l == path {
			return true
		}
	}
	return false
}

func TestCLIContractNamespaces(t *testing.T) {
	t.Parallel()
	st := contractStore(t) // verify and prune are jobs: their locks are the store's
	img := filepath.Join(t.TempDir(), "img")
	os.WriteFile(img, e2e.RandBytes(50000, 31), 0o644)
	e2e.MustCairn(t, "--store", st, "backup", "-q", "--ns", "contract/b", "--id", "nsx", "--type", "host", "d.img:"+img)
	rows := listSnaps(t, st, "ns/contract/ns/b/host/nsx")
	if len(rows) != 1 {
		t.Fatalf("snapshots of ns/contract/ns/b/host/nsx: %v", rows)
	}
	full := rows[0].Snapshot                             // ns/contract/ns/b/host/nsx/TIME
	rel := strings.TrimPrefix(full, "ns/contract/ns/b/") // host/nsx/TIME
	drive := t.TempDir()
	for _, c := range [][]string{
		{"protect", "--ns", "contract/b", rel},
		{"protect", full},
		{"unprotect", "--ns", "contract/b", full}, // the same namespace twice: no conflict
		{"verify", "--ns", "contract/b", "host/nsx"},
		{"verify", "ns/contract/ns/b/host/nsx/latest"},
		{"prune", "--ns", "contract/b", "host/nsx", "--keep-last", "3"},
		{"prune", "ns/contract/ns/b/host/nsx", "--keep-last", "3"},
		{"forget", "--dry-run", "--ns", "contract/b", rel},
		{"forget", "--dry-run", full},
		{"forget", "--dry-run", "--group", "--ns", "contract/b", "host/nsx"},
	} {
		e2e.MustCairn(t, append([]string{"--store", st, "-q"}, c...)...)
	}
	if rows := listSnaps(t, st, "ns/contract/ns/b/host/nsx"); len(rows) != 1 || rows[0].Protected {
		t.Errorf("after protect, unprotect, prune and dry forgets: %v", rows)
	}
	// A reference naming another namespace than --ns is bad usage.
	for _, c := range [][]string{
		{"protect", "--ns", "other", full},
		{"unprotect", "--ns", "other", full},
		{"verify", "--ns", "other", full},
		{"prune", "--ns", "other", "ns/contract/ns/b/host/nsx", "--keep-last", "1"},
		{"forget", "--ns", "other", full},
		{"forget", "--group", "--ns", "other", "ns/contract/ns/b/host/nsx"},
		{"tape", "export", "--drive", drive, "--pool", "p", "--ns", "other", full},
		{"tape", "restore", "--drive", drive, "--ns", "other", full},
		{"tape", "restore", "--drive", drive, "--ns", "contract/b", "host/nsx"}, // no time
		{"verify", "--ns", "bad//ns", "host/nsx"},
	} {
		r := e2e.Cairn(t, nil, append([]string{"--store", st}, c...)...)
		if r.Code != 2 {
			t.Errorf("cairn %q: exit %d, want 2\n%s", c, r.Code, r.Stderr)
		}
	}
	if rows := listSnaps(t, st, "ns/contract/ns/b/host/nsx"); len(rows) != 1 {
		t.Errorf("a refused command removed the snapshot: %v", rows)
	}
}

func TestCLIContractCompletion(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	tree := t.TempDir()
	os.MkdirAll(filepath.Join(tree, "sub dir", "deeper"), 0o755)
	os.WriteFile(filepath.Join(tree, "sub dir", "f.txt"), []byte("f"), 0o644)
	os.WriteFile(filepath.Join(tree, "top"), []byte("t"), 0o644)
	e2e.MustCairn(t, "--store", st, "backup", "-q", "--id", "contract-comp", "--type", "host", "root.pxar:"+tree)
	e2e.MustCairn(t, "--store", st, "backup", "-q", "--ns", "contract/c", "--id", "compns", "--type", "host", "root.pxar:"+tree)
	snap := listSnaps(t, st, "host/contract-comp")[0].Snapshot
	complete := func(args ...string) []string {
		t.Helper()
		r := e2e.MustCairn(t, append([]string{"--store", st, "__complete"}, args...)...)
		var out []string
		for line := range strings.Lines(r.Stdout) {
			out = append(out, strings.TrimRight(line, "\n"))
		}
		return out
	}
	has := func(got []string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains("\n"+strings.Join(got, "\n")+"\n", "\n"+w+"\n") {
				t.Errorf("completion %q lacks %q", got, w)
			}
		}
	}
	has(complete("ls", "host/contract-c"), "host/contract-comp/")
	has(complete("ls", "host/contract-comp/"), "host/contract-comp/latest", snap)
	has(complete("ls", "ns/contract/ns/c/"), "ns/contract/ns/c/host/compns/")
	has(complete("verify", "--ns", "contract/c", ""), "host/compns/")
	has(complete("cat", snap, ""), "root.pxar")
	has(complete("ls", "host/contract-comp/latest", "root.pxar", ""), "sub dir/", "top")
	has(complete("ls", "host/contract-comp/latest", "root.pxar", "sub dir/"), "sub dir/deeper/", "sub dir/f.txt")
	has(complete("prune", "host/contract-c"), "host/contract-comp")
	// A bad store, snapshot or archive: no candidates, no noise, exit 0.
	for _, args := range [][]string{
		{"--store", filepath.Join(t.TempDir(), "none"), "__complete", "ls", ""},
		{"--store", st, "__complete", "ls", "host/no-such/latest", ""},
		{"--store", st, "__complete", "ls", snap, "no.pxar", ""},
		{"--store", st, "__complete", "ls", "../../etc", ""},
	} {
		r := e2e.Cairn(t, nil, args...)
		if r.Code != 0 || strings.TrimSpace(r.Stdout) != ":5" {
			t.Errorf("cairn %q: exit %d, stdout %q (want the error directive only)", args, r.Code, r.Stdout)
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if r := e2e.MustCairn(t, "completion", sh); !strings.Contains(r.Stdout, "cairn") || len(r.Stdout) < 500 {
			t.Errorf("completion %s: %q", sh, r.Stdout)
		}
	}
}

// checkManPages checks `cairn gen man` writes a page for each command
// of paths (and cairn itself).
func checkManPages(t *testing.T, paths []string) {
	dir := filepath.Join(t.TempDir(), "man")
	e2e.MustCairn(t, "gen", "man", dir)
	for _, p := range append(paths, "") {
		name := strings.TrimSuffix("cairn-"+strings.ReplaceAll(p, " ", "-"), "-") + ".1"
		page, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no man page for %q: %v", p, err)
			continue
		}
		dashed := strings.ReplaceAll(strings.TrimSuffix("cairn-"+strings.ReplaceAll(p, " ", "-"), "-"), "-", `\-`) // roff's minus
		for _, want := range []string{".TH " + strings.ToUpper(dashed) + " 1 ", ".SH NAME\n" + dashed + ` \- `,
			".SH SYNOPSIS\n\\fB" + strings.ReplaceAll(strings.TrimSpace("cairn "+p), "-", `\-`) + `\fR`, ".SH EXAMPLES\n", `.SH "EXIT STATUS"` + "\n"} {
			if !bytes.Contains(page, []byte(want)) {
				t.Errorf("%s lacks %q:\n%.300s", name, want, page)
			}
		}
	}
	if r := e2e.Cairn(t, nil, "gen", "man"); r.Code != 2 {
		t.Errorf("gen man without DIR: exit %d", r.Code)
	}
	if r := e2e.Cairn(t, nil, "gen", "man", "/proc/no/such"); r.Code != 1 {
		t.Errorf("gen man into /proc: exit %d", r.Code)
	}
}

// TestCLIContractMakeInstall stages `make install` into DESTDIR.
func TestCLIContractMakeInstall(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dest := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	cmd := exec.Command("make", "install", "DESTDIR="+dest, "PREFIX=/usr", "VERSION=v9.8.7", "COMMIT=0123abcd",
		"CTIME=2026-11-30T10:00:00Z", "DIRTY=true")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	exec.Command("make", "-C", root, "clean").Run()
	for _, f := range []string{"usr/bin/cairn", "usr/share/man/man1/cairn.1", "usr/share/man/man1/cairn-backup.1",
		"usr/share/bash-completion/completions/cairn", "usr/share/zsh/site-functions/_cairn",
		"usr/share/fish/vendor_completions.d/cairn.fish"} {
		if fi, err := os.Stat(filepath.Join(dest, f)); err != nil || fi.Size() == 0 {
			t.Errorf("make install: %s: %v", f, err)
		}
	}
	checkInstalledUnits(t, dest)
	// the version, commit, commit time and dirty flag the Makefile set
	// with -ldflags -X
	bin := filepath.Join(dest, "usr/bin/cairn")
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out)
	}
	want := map[string]any{"version": "v9.8.7", "commit": "0123abcd", "commit_time": "2026-11-30T10:00:00Z",
		"dirty": true, "go_version": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("version --json: %s = %v, want %v", k, v[k], w)
		}
	}
	line, _ := exec.Command(bin, "--version").Output()
	if want := "cairn v9.8.7 (" + runtime.Version(); !strings.HasPrefix(string(line), want) || !strings.Contains(string(line), "0123abcd-dirty") {
		t.Errorf("--version: %q", line)
	}
}
