package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// notifySocket listens where `cairn serve` tells systemd its state (an
// abstract datagram socket, as systemd's NOTIFY_SOCKET may be) and
// returns the variable to give it and a function that reads the next
// message (failing the test after a minute).
func notifySocket(t *testing.T) (env string, next func() string) {
	name := fmt.Sprintf("@cairn-e2e-serve-%d-%d", os.Getpid(), time.Now().UnixNano())
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "\x00" + name[1:], Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sock.Close() })
	return "NOTIFY_SOCKET=" + name, func() string {
		t.Helper()
		sock.SetReadDeadline(time.Now().Add(time.Minute))
		buf := make([]byte, 4096)
		n, err := sock.Read(buf)
		if err != nil {
			t.Fatalf("no notification from cairn serve: %v", err)
		}
		return string(buf[:n])
	}
}

// freePort is a loopback address nothing listened on a moment ago.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// served is a running `cairn serve`.
type served struct {
	cmd    *exec.Cmd
	stderr strings.Builder
	done   chan struct{}
	err    error
	next   func() string
}

// startServe starts `cairn serve` as systemd would (Type=notify) and
// waits for READY=1.
func startServe(t *testing.T, env []string, args ...string) *served {
	notify, next := notifySocket(t)
	s := &served{cmd: exec.Command(e2e.Binary(), args...), done: make(chan struct{}), next: next}
	s.cmd.Env = append(append(os.Environ(), notify), env...)
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	if got := next(); got != "READY=1" {
		t.Fatalf("first notification %q, want READY=1\n%s", got, s.stderr.String())
	}
	return s
}

// stop sends SIGTERM: STOPPING=1, then exit 0.
func (s *served) stop(t *testing.T) {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := s.next(); got != "STOPPING=1" {
		t.Errorf("notification after SIGTERM %q, want STOPPING=1", got)
	}
	select {
	case <-s.done:
		if s.err != nil {
			t.Errorf("cairn serve after SIGTERM: %v\n%s", s.err, s.stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("cairn serve did not exit within a minute of SIGTERM\n%s", s.stderr.String())
	}
}

// reload sends SIGHUP: RELOADING=1, then READY=1.
func (s *served) reload(t *testing.T) {
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if a, b := s.next(), s.next(); a != "RELOADING=1" || b != "READY=1" {
		t.Errorf("notifications after SIGHUP %q, %q; want RELOADING=1, READY=1", a, b)
	}
}

// get fetches a page of the daemon's listener.
func get(t *testing.T, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, body)
	}
	return string(body)
}

// TestServeChecksConfig: --check-config reads the configuration and the
// store and starts nothing; a bad configuration names file, line and
// field and exits with a usage error; a missing one says so.
func TestServeChecksConfig(t *testing.T) {
	st := e2e.OwnStore(t, "cairn-e2e-serve-")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	e2e.Write(t, good, "[[job]]\nkind = \"gc\"\nschedule = \"sun 04:00\"\n", 0o600)
	if r := e2e.Cairn(t, nil, "--store", st, "serve", "--config", good, "--check-config"); r.Code != 0 || r.Stdout != "" {
		t.Errorf("good configuration: exit %d, %q %q", r.Code, r.Stdout, r.Stderr)
	}
	bad := filepath.Join(dir, "bad.toml")
	e2e.Write(t, bad, "[[job]]\nkind = \"gc\"\nschedule = \"dialy\"\n", 0o600)
	r := e2e.Cairn(t, nil, "--store", st, "serve", "--config", bad, "--check-config")
	if r.Code == 0 || !strings.Contains(r.Stderr, bad+":3:") || !strings.Contains(r.Stderr, "dialy") {
		t.Errorf("bad schedule: exit %d, %q", r.Code, r.Stderr)
	}
	r = e2e.Cairn(t, nil, "--store", st, "serve", "--config", filepath.Join(dir, "none.toml"), "--check-config")
	if r.Code == 0 || !strings.Contains(r.Stderr, "none.toml") {
		t.Errorf("missing configuration: exit %d, %q", r.Code, r.Stderr)
	}
}

// statusJSON is what /status.json holds of the runs.
type statusJSON struct {
	Runs []struct {
		Job, Kind, Result, Error string
		Due, Start               time.Time
	}
}

func decodeStatus(t *testing.T, body string) statusJSON {
	var st statusJSON
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status.json: %v\n%.500s", err, body)
	}
	return st
}
