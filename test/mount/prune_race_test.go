package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// flockHeld reports whether process pid holds a flock on the file with
// inode ino, as /proc/locks shows ("1: FLOCK ADVISORY READ PID MAJ:MIN:INODE 0 EOF").
// Reading /proc/locks takes no lock, so the check cannot disturb the holder.
func flockHeld(t *testing.T, pid int, ino uint64) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" || f[4] != strconv.Itoa(pid) {
			continue
		}
		if i := strings.LastIndexByte(f[5], ':'); i >= 0 && f[5][i+1:] == strconv.FormatUint(ino, 10) {
			return true
		}
	}
	return false
}

// stoppedHolder is a cairn process stopped (SIGSTOP) while it holds a
// snapshot's lock.
type stoppedHolder struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan struct{}
	err       error
}

// resume lets the process go on and waits for its end.
func (h *stoppedHolder) resume(t *testing.T) (stdout string) {
	t.Helper()
	h.cmd.Process.Signal(syscall.SIGCONT)
	<-h.done
	if h.err != nil {
		t.Fatalf("%v: %v\nstdout: %s\nstderr: %s", h.cmd.Args[1:], h.err, h.out.String(), h.errb.String())
	}
	return h.out.String()
}

// holdSnapshot runs cairn with args until it holds a flock on the
// directory dir, then stops it there. A run that ends before it is
// caught holding the lock is tried again, up to five times.
func holdSnapshot(t *testing.T, dir string, args ...string) *stoppedHolder {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		h := &stoppedHolder{cmd: exec.Command(e2e.Binary(), args...), done: make(chan struct{})}
		h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.errb
		if err := h.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { h.err = h.cmd.Wait(); close(h.done) }()
		if h.catch(t, st.Ino) {
			t.Cleanup(func() {
				h.cmd.Process.Kill()
				h.cmd.Process.Signal(syscall.SIGCONT)
				<-h.done
			})
			return h
		}
		t.Logf("cairn %v ended before it was caught holding %s; again", args[2:], dir)
	}
	t.Fatalf("cairn %v was never caught holding a lock on %s", args, dir)
	return nil
}

// catch stops the process once it holds the lock on inode ino; false
// when the process ended first.
func (h *stoppedHolder) catch(t *testing.T, ino uint64) bool {
	pid := h.cmd.Process.Pid
	for {
		if flockHeld(t, pid, ino) {
			h.cmd.Process.Signal(syscall.SIGSTOP)
			if flockHeld(t, pid, ino) {
				return true
			}
			h.cmd.Process.Signal(syscall.SIGCONT) // it let go as it was stopped
		}
		select {
		case <-h.done:
			return false
		case <-time.After(200 * time.Microsecond):
		}
	}
}

// TestPruneRacingReaders: a verify and a tape export each hold a
// snapshot prune wants to remove; prune skips both with a message,
// removes the rest and succeeds; the readers finish; what is left
// verifies, and the next prune removes the two.
func TestPruneRacingReaders(t *testing.T) {
	st := e2e.SharedStore(t)
	ns, seed := e2e.UniqueNS("prunerace")
	var snaps []string
	for d := 1; d <= 4; d++ {
		data := e2e.RandBytes(24<<20, seed+uint64(d))
		snaps = append(snaps, e2e.TapeBackup(t, st, ns, "1", fmt.Sprintf("2024-03-0%dT10:00:00Z", d), data))
	}
	drive := t.TempDir()
	verify := holdSnapshot(t, filepath.Join(st, snaps[0]), "--store", st, "verify", "--json", snaps[0])
	export := holdSnapshot(t, filepath.Join(st, snaps[1]), "--store", st, "tape", "export", "--drive", drive,
		"--pool", "race", "--tape-size", "256M", "--new-set", "--json", snaps[1])

	r := e2e.MustCairn(t, "--store", st, "prune", "--ns", ns, "vm/1", "--keep-last", "1", "--json")
	var res pruneResult
	e2e.DecodeJSON(t, r, &res)
	want := []string{"2024-03-01T10:00:00Z remove skipped: locked", "2024-03-02T10:00:00Z remove skipped: locked",
		"2024-03-03T10:00:00Z remove removed", "2024-03-04T10:00:00Z keep"}
	if got := res.marks(); res.State != "ok" || res.Result.Skipped != 2 || res.Result.Removed != 1 || !slices.Equal(got, want) {
		t.Fatalf("prune beside readers: %s %v\n got  %q\n want %q", res.State, res.Errors, got, want)
	}
	text := e2e.MustCairn(t, "--store", st, "prune", "--ns", ns, "vm/1", "--keep-last", "1")
	if !strings.Contains(text.Stdout, "2024-03-01T10:00:00Z  remove        skipped: locked") {
		t.Errorf("text output does not say the snapshot was skipped:\n%s", text.Stdout)
	}

	if out := verify.resume(t); e2e.JobState(t, out) != "ok" {
		t.Errorf("verify of the held snapshot: %s", out)
	}
	var eres e2e.TapeExportResult
	e2e.DecodeJSON(t, e2e.Result{Stdout: export.resume(t)}, &eres)
	if eres.State != "ok" || eres.Result.OK != 1 {
		t.Errorf("tape export of the held snapshot: %+v", eres)
	}
	e2e.MustCairn(t, "--store", st, "verify", "--ns", ns)
	e2e.DecodeJSON(t, e2e.MustCairn(t, "--store", st, "prune", "--ns", ns, "vm/1", "--keep-last", "1", "--json"), &res)
	if res.Result.Removed != 2 || res.Result.Skipped != 0 {
		t.Fatalf("prune after the readers: %+v", res.Result)
	}
	e2e.MustCairn(t, "--store", st, "verify", "--ns", ns)
}
