package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// The command line's contract for scripts (issue 14): exit codes,
// signals, version, -q/-v/--log-format, --lock-wait for jobs, --ns, the
// missing-store message, completion, man pages and sizes.

// contractStore makes a store of the test's own (its gc and lock tests
// must not touch the shared one).
func contractStore(t *testing.T) string {
	t.Helper()
	st := e2e.OwnStore(t, "cairn-e2e-")
	return st
}

// commandPaths lists every command as `cairn __complete` offers it,
// groups descended into: "backup", "tape export", ….
func commandPaths(t *testing.T, prefix ...string) []string {
	t.Helper()
	out := e2e.MustCairn(t, append(append([]string{"__complete"}, prefix...), "")...).Stdout
	var paths []string
	for line := range strings.Lines(out) {
		name, _, _ := strings.Cut(strings.TrimSpace(line), "\t")
		if name == "" || strings.HasPrefix(name, ":") || strings.HasPrefix(name, "-") || name == "help" {
			continue
		}
		path := append(append([]string{}, prefix...), name)
		subs := commandPaths(t, path...)
		if len(subs) == 0 {
			paths = append(paths, strings.Join(path, " "))
		}
		paths = append(paths, subs...)
	}
	return paths
}

func TestCLIContractExitCodes(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	paths := commandPaths(t)
	for _, want := range []string{"backup", "tape export", "version", "gen man", "completion bash", "forget", "gc"} {
		if !strings.Contains("\n"+strings.Join(paths, "\n")+"\n", "\n"+want+"\n") {
			t.Fatalf("commands %q lack %q", paths, want)
		}
	}
	checkManPages(t, paths)
	// Every command: an unknown flag is bad usage.
	for _, p := range paths {
		args := append(strings.Fields(p), "--no-such-flag")
		if r := e2e.Cairn(t, nil, append([]string{"--store", st}, args...)...); r.Code != 2 || !strings.Contains(r.Stderr, "unknown flag") {
			t.Errorf("cairn %s: exit %d, want 2 (unknown flag)\n%s", strings.Join(args, " "), r.Code, r.Stderr)
		}
	}
	img := filepath.Join(t.TempDir(), "img")
	os.WriteFile(img, e2e.RandBytes(1000, 7), 0o644)
	for _, c := range []struct {
		code int
		args []string
		says string
	}{
		{2, nil, "needs a command"},
		{2, []string{"no-such-command"}, `unknown command "no-such-command"`},
		{2, []string{"tape", "no-such"}, `unknown command "no-such" for "cairn tape"`},
		{2, []string{"backup"}, "requires at least 1 arg"},
		{2, []string{"mount"}, "accepts 1 arg"},
		{2, []string{"mount", "a", "b"}, "accepts 1 arg"},
		{2, []string{"restore", "host/x"}, "accepts 3 arg"},
		{2, []string{"gc", "extra"}, "cairn gc"},
		{2, []string{"version", "extra"}, "cairn version"},
		{2, []string{"forget"}, "requires at least 1 arg"},
		{2, []string{"backup", "d.img:" + img, "--id", "c1", "--type", "foo"}, `backup type "foo"`},
		{2, []string{"backup", "d.img:" + img, "--type", "vm"}, "--id is required with --type vm"},
		{2, []string{"backup", "d.img:" + img, "--id", "c1", "--lock-wait", "soon"}, "--lock-wait"},
		{2, []string{"backup", "d.img:" + img, "--id", "c1", "--chunk-size", "1e99"}, `size "1e99"`},
		{2, []string{"backup", "d.img:" + img, "--id", "c1", "--chunk-size", "-4M"}, "negative"},
		{2, []string{"backup", "d.img:" + img, "--id", "c1", "--chunk-size", "99999999999999999999999"}, "more than 2^62"},
		{2, []string{"--log-format", "xml", "snapshots"}, "--log-format"},
		{2, []string{"gc", "--atime-cutoff", "-5m"}, "atime-cutoff"},
		{0, []string{"version"}, ""},
		{0, []string{"--version"}, ""},
	} {
		r := e2e.Cairn(t, nil, append([]string{"--store", st}, c.args...)...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.says) {
			t.Errorf("cairn %q: exit %d, want %d with %q\nstderr: %s", c.args, r.Code, c.code, c.says, r.Stderr)
		}
		if c.code == 2 && !strings.Contains(r.Stderr, "--help") {
			t.Errorf("cairn %q: a usage error does not point to --help: %s", c.args, r.Stderr)
		}
	}
	// 4M stays 4 MiB (and 4MB too): a 4 MiB chunk is the largest there is.
	for _, cs := range []string{"4M", "4MB", "4 MiB"} {
		e2e.MustCairn(t, "--store", st, "backup", "--id", "contract-size", "--type", "host", "--no-sync", "-q", "--chunk-size", cs, "d.img:"+img)
	}
	if r := e2e.Cairn(t, nil, "--store", st, "backup", "--id", "contract-size", "--chunk-size", "5MB", "d.img:"+img); r.Code != 2 || !strings.Contains(r.Stderr, "chunk") {
		t.Errorf("--chunk-size 5MB: exit %d: %s", r.Code, r.Stderr)
	}
	// 3: finished with errors (a protected snapshot is refused).
	snaps := listSnaps(t, st, "host/contract-size")
	e2e.MustCairn(t, "--store", st, "protect", snaps[0].Snapshot)
	if r := e2e.Cairn(t, nil, "--store", st, "forget", snaps[0].Snapshot, snaps[1].Snapshot); r.Code != 3 {
		t.Errorf("forget of a protected and an unprotected snapshot: exit %d, want 3\n%s", r.Code, r.Stderr)
	}
	e2e.MustCairn(t, "--store", st, "unprotect", snaps[0].Snapshot)
}

func TestCLIContractMissingStore(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-store-here")
	r := e2e.Cairn(t, nil, "--store", missing, "snapshots")
	if r.Code != 1 {
		t.Fatalf("missing store: exit %d, want 1", r.Code)
	}
	for _, want := range []string{missing, "from --store", "--store DIR", "CAIRN_STORE", "cairn init"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("missing store: stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	r = e2e.Cairn(t, []string{"CAIRN_STORE=" + missing}, "verify")
	if r.Code != 1 || !strings.Contains(r.Stderr, missing) || !strings.Contains(r.Stderr, "from CAIRN_STORE") {
		t.Errorf("missing store from CAIRN_STORE: exit %d\n%s", r.Code, r.Stderr)
	}
	// A directory that is no store gets the same advice.
	r = e2e.Cairn(t, nil, "--store", t.TempDir(), "snapshots")
	if r.Code != 1 || !strings.Contains(r.Stderr, "cairn init") {
		t.Errorf("not a store: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestCLIContractSignals interrupts a real backup of an image read from
// a FIFO that sends 64 KiB and then nothing: the process is waiting in
// the read (its snapshot directory exists) when the signal comes.
func TestCLIContractSignals(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	for _, c := range interrupts {
		t.Run(c.name, func(t *testing.T) {
			id := "contract-" + strings.ToLower(c.name)
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := unix.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(fifo, os.O_RDWR, 0) // never blocks, keeps the FIFO open
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			cmd, stderr, exited := startCairn(t, "--store", st, "backup", "--id", id, "--type", "host", "d.img:"+fifo)
			if _, err := w.Write(e2e.RandBytes(64<<10, 11)); err != nil {
				t.Fatal(err)
			}
			group := filepath.Join(st, "host", id)
			waitFor(t, exited, func() bool { ents, _ := os.ReadDir(group); return len(snapshotDirs(ents)) == 1 })
			cmd.Process.Signal(c.sig)
			select {
			case <-exited:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("backup did not end after %s\n%s", c.name, stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Errorf("exit %d after %s, want %d\n%s", code, c.name, c.code, stderr.String())
			}
			want := "backup interrupted by " + c.name + ": no snapshot was made"
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
			}
			ents, _ := os.ReadDir(group)
			if d := snapshotDirs(ents); len(d) != 0 {
				t.Errorf("the interrupted snapshot stayed: %v", d)
			}
			if rows := listSnaps(t, st, "host/"+id); len(rows) != 0 {
				t.Errorf("snapshots lists the interrupted backup: %v", rows)
			}
		})
	}
}

// interrupts are the signals that interrupt a command, with the exit
// code each gives.
var interrupts = []struct {
	sig  syscall.Signal
	code int
	name string
}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}}

// startCairn starts the binary; exited receives its end.
func startCairn(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
	t.Helper()
	return startCairnStdin(t, nil, args...)
}

// startCairnStdin is startCairn with stdin as standard input (nil: none).
func startCairnStdin(t *testing.T, stdin *os.File, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(e2e.Binary(), args...)
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return cmd, stderr, exited
}

// snapshotDirs are the snapshot directories (named by time) of a group.
func snapshotDirs(ents []os.DirEntry) []string {
	var out []string
	for _, e := range ents {
		if e.IsDir() && strings.HasSuffix(e.Name(), "Z") {
			out = append(out, e.Name())
		}
	}
	return out
}

// waitFor polls cond until it holds; the process ending first fails.
func waitFor(t *testing.T, exited <-chan error, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		select {
		case err := <-exited:
			t.Fatalf("the process ended before it was ready: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the process never got ready")
		}
	}
}

func TestCLIContractVersion(t *testing.T) {
	t.Parallel()
	r := e2e.MustCairn(t, "version")
	if !strings.HasPrefix(r.Stdout, "cairn ") || !strings.Contains(r.Stdout, runtime.Version()) {
		t.Errorf("cairn version: %q", r.Stdout)
	}
	if v := e2e.MustCairn(t, "--version").Stdout; v != r.Stdout {
		t.Errorf("--version %q differs from version %q", v, r.Stdout)
	}
	// Set at build time with -ldflags -X: TestCLIContractMakeInstall
	// checks what the Makefile sets (one non-race build for both).
}

// TestCLIContractMountSignal: SIGTERM is how a mount ends (systemd's
// stop): unmounted cleanly, it exits 0, not 143.
func TestCLIContractMountSignal(t *testing.T) {
	e2e.NeedFUSE(t)
	st := e2e.SharedStore(t)
	mnt := t.TempDir()
	cmd, stderr, exited := startCairn(t, "--store", st, "mount", mnt)
	waitFor(t, exited, func() bool {
		info, _ := os.ReadFile("/proc/self/mountinfo")
		return bytes.Contains(info, []byte(" "+mnt+" "))
	})
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("mount did not end after SIGTERM\n%s", stderr)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("mount ended by SIGTERM: exit %d, want 0\n%s", code, stderr)
	}
	if info, _ := os.ReadFile("/proc/self/mountinfo"); bytes.Contains(info, []byte(" "+mnt+" ")) {
		t.Errorf("%s is still mounted", mnt)
	}
}
