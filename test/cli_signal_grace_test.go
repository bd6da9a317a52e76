package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestCLISignalGrace: one SIGTERM or SIGINT ends a command stuck in a
// system call the signal cannot interrupt, once the grace period is
// over. The command is a backup of standard input, a pipe whose writer
// stays and writes nothing: the backup waits in read(2) of fd 0, which
// no signal or context ends (Go restarts it), so only the grace period
// ends it: before it, the first signal was ignored and only a second one
// ended the process. The test signals once a thread of the process
// waits in that read (/proc/PID/task/*/syscall).
func TestCLISignalGrace(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	for _, c := range interrupts {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() // the writer stays until the end: no EOF
			cmd, stderr, exited := startCairnStdin(t, r, "--store", st, "backup", "--type", "host", "--id", "grace-"+strings.ToLower(c.name), "a.img:-")
			r.Close()
			defer cmd.Process.Kill() // should the test fail before the signal
			waitFor(t, exited, func() bool { return inRead(cmd.Process.Pid, 0) })
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(time.Minute): // the grace is 5 s: generous for a loaded machine
				cmd.Process.Kill()
				<-exited // stderr is written no more
				t.Fatalf("one %s did not end the stuck backup within a minute\n%s", c.name, stderr)
			}
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Errorf("exit %d after %s, want %d\n%s", code, c.name, c.code, stderr)
			}
			want := "cairn: " + c.name + ": still running 5s after it"
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		})
	}
}

// TestCLISignalFIFO: a backup waiting to open a FIFO no writer opens
// ends at one signal, at once and cleanly (no grace period, no
// snapshot): the open is given up with the backup's context.
func TestCLISignalFIFO(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	for _, c := range interrupts {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			img := writeFile(t, filepath.Join(dir, "a.img"), e2e.RandBytes(4096, 3))
			fifo := filepath.Join(dir, "fifo")
			if err := unix.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			id := "fifo-" + strings.ToLower(c.name)
			cmd, stderr, exited := startCairn(t, "--store", st, "backup", "--type", "host", "--id", id, "a.img:"+img, "b.img:"+fifo)
			defer cmd.Process.Kill()
			waitFor(t, exited, func() bool { return holdsOpen(cmd.Process.Pid, img) })
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("one %s did not end the backup within a minute\n%s", c.name, stderr)
			}
			if code := cmd.ProcessState.ExitCode(); code != c.code || strings.Contains(stderr.String(), "still running") ||
				!strings.Contains(stderr.String(), "no snapshot was made") {
				t.Errorf("exit %d after %s, want %d, ended by the command, not the grace period:\n%s", code, c.name, c.code, stderr)
			}
			if r := e2e.Cairn(t, nil, "--store", st, "snapshots", "host/"+id); strings.Contains(r.Stdout, id) {
				t.Errorf("a snapshot was made:\n%s", r.Stdout)
			}
		})
	}
}

// inRead says whether a thread of process pid waits in read(2) of fd.
func inRead(pid, fd int) bool {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/syscall", pid, task.Name()))
		if f := strings.Fields(string(b)); err == nil && len(f) > 1 && f[0] == "0" && f[1] == fmt.Sprintf("%#x", fd) {
			return true
		}
	}
	return false
}

// holdsOpen says whether process pid has path open.
func holdsOpen(pid int, path string) bool {
	fds := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, _ := os.ReadDir(fds)
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}
