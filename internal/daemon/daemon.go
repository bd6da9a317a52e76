package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// `cairn mount --daemon` in the manner of proxmox-backup-client mount: Go
// cannot fork, so the command runs itself again with Env set, in a
// new session with stdin on /dev/null. The child mounts in the foreground
// code path; once the mount is ready it moves its stdout and stderr onto
// the log file (fd daemonLogFD) and writes one byte into the pipe it
// inherited (fd daemonReadyFD). The parent, which reads the child's
// stderr until then, exits 0 on that byte, or with the child's exit code
// and error when the child ends without it.
const (
	// Env marks the child (set to 1).
	Env           = "CAIRN_MOUNT_DAEMON_CHILD"
	daemonReadyFD = 3
	daemonLogFD   = 4
	daemonPassFD  = 5 // the key files' passphrase typed at the parent's terminal
)

// Child tells whether this process is the child of --daemon (and
// forgets the marker, so nothing the child starts inherits it).
func Child() bool {
	if os.Getenv(Env) != "1" {
		return false
	}
	os.Unsetenv(Env)
	// Should the parent die before the mount is ready, a write to the
	// stderr it was reading fails instead of killing this process by
	// SIGPIPE with the mount made: then telling it the mount is ready
	// fails and the mount is taken down.
	signal.Ignore(syscall.SIGPIPE)
	return true
}

// Ready ends the child's start: logs and output go to the log file
// from now on, the parent learns the mount is ready, and the working
// directory is left so the daemon keeps no other file system busy.
func Ready() error {
	log := os.NewFile(daemonLogFD, "log")
	ready := os.NewFile(daemonReadyFD, "ready")
	defer log.Close()
	defer ready.Close()
	for _, fd := range []int{1, 2} {
		if err := unix.Dup3(daemonLogFD, fd, 0); err != nil {
			return fmt.Errorf("daemon: log file onto fd %d: %w", fd, err)
		}
	}
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	if _, err := ready.Write([]byte{1}); err != nil {
		return fmt.Errorf("daemon: tell the parent the mount is ready: %w", err)
	}
	return nil
}

// ExitError is the parent's error when the child ended before the mount
// was ready: the child's own error and its exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Start starts this program again as the --daemon child and waits until
// the mount is ready or has failed; what the child said before (its log
// lines) goes to stderr. logFile receives the daemon's log ("":
// discarded); pass (when not nil) is the key files' passphrase, which
// the child reads from the file that passEnv names. It returns the
// child's process ID; a child that failed is an *ExitError.
func Start(ctx context.Context, stderr io.Writer, logFile string, pass *os.File, passEnv string) (int, error) {
	log, err := openLog(logFile)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("--daemon: %w", err)
	}
	defer readyR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return 0, fmt.Errorf("--daemon: %w", err)
	}
	defer errR.Close()
	cmd, err := start(readyW, errW, log, pass, passEnv)
	readyW.Close()
	errW.Close()
	if err != nil {
		return 0, err
	}
	// The child's stderr up to readiness: its log lines and, when it
	// fails, its error. It ends (EOF) when the child moves its stderr to
	// the log file, just before it says it is ready, or when it exits.
	out := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(errR, 1<<20))
		io.Copy(io.Discard, errR) // more is dropped, never left to block the child
		out <- b
	}()
	ready := make(chan bool, 1)
	go func() {
		var b [1]byte
		n, _ := readyR.Read(b[:]) // EOF without a byte: the child ended first
		ready <- n == 1
	}()
	var ok bool
	select {
	case ok = <-ready:
	case <-ctx.Done():
		// Interrupted while waiting: the child, in its own session, did
		// not get the signal. Stop it; closing the pipe makes its
		// readiness fail should it mount meanwhile, so it unmounts.
		cmd.Process.Signal(syscall.SIGTERM)
		readyR.Close()
		<-ready
		<-out
		cmd.Wait()
		return 0, fmt.Errorf("--daemon: interrupted before the mount was ready: %w", ctx.Err())
	}
	said := <-out
	if !ok {
		return 0, failure(cmd.Wait(), string(said), stderr)
	}
	stderr.Write(said)
	return cmd.Process.Pid, nil
}

// start runs this program again with the same arguments as the
// --daemon child: in a new session, stdin and stdout on /dev/null,
// stderr on errW, ready and log as fds 3 and 4, pass (when not nil: the
// key files' passphrase) as fd 5.
func start(ready, errW, log, pass *os.File, passEnv string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--daemon: cannot find this program to run it again: %w", err)
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), Env+"=1")
	cmd.Stderr = errW
	cmd.ExtraFiles = []*os.File{ready, log} // daemonReadyFD, daemonLogFD
	if pass != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, pass) // daemonPassFD
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=/dev/fd/%d", passEnv, daemonPassFD))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("--daemon: start %s: %w", exe, err)
	}
	return cmd, nil
}

// failure is the parent's error when the child ended before the
// mount was ready: the child's own error (its last "cairn: " line, which
// run printed) with the child's exit code; its other output is passed on.
func failure(waitErr error, said string, stderr io.Writer) error {
	code := 1 // the command line's exit code of a failure
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) && ee.ExitCode() > 0 {
		code = ee.ExitCode()
	}
	said = strings.TrimRight(said, "\n")
	msg := ""
	if i := strings.LastIndex(said, "cairn: "); i >= 0 && (i == 0 || said[i-1] == '\n') {
		msg = strings.TrimPrefix(said[i:], "cairn: ")
		said = said[:i]
	}
	stderr.Write([]byte(said))
	if msg == "" {
		msg = fmt.Sprintf("the background mount ended before it was ready (%v)", waitErr)
	}
	return &ExitError{code, errors.New(msg)}
}

// openLog opens --log-file for appending (created 0600: the log
// names the store's snapshots and paths), or /dev/null without one.
func openLog(name string) (*os.File, error) {
	if name == "" {
		name = os.DevNull
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--log-file: %w", err)
	}
	return f, nil
}

// LogName names where the daemon logs, for a message.
func LogName(name string) string {
	if name == "" {
		return "discarded (give --log-file)"
	}
	return name
}
