package test

import (
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
// over. The command is a backup of two images, a regular file and then a
// FIFO no writer ever opens: openInputs opens them in order, nothing
// between the two opens looks at the context, and open(2) of the FIFO
// waits for a writer whatever signal comes (Go restarts it). So once the
// first image is open (the process holds it in /proc/PID/fd) the process
// is stuck in, or bound for, that open, and only the grace period ends
// it: before it, the first signal was ignored and only a second one
// ended the process.
func TestCLISignalGrace(t *testing.T) {
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
			cmd, stderr, exited := startCairn(t, "--store", st, "backup", "--type", "host", "--id", "grace-"+strings.ToLower(c.name),
				"a.img:"+img, "b.img:"+fifo)
			defer cmd.Process.Kill() // should the test fail before the signal
			waitFor(t, exited, func() bool { return holdsOpen(cmd.Process.Pid, img) })
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
