package test

import (
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

// TestServe starts `cairn serve --mount` as systemd would (Type=notify):
// it says READY=1 once the store is mounted and /healthz answers, a job
// started through the mount's control file runs beside the mount,
// SIGHUP gives RELOADING=1 then READY=1, and
// SIGTERM unmounts, says STOPPING=1 and exits 0.
func TestServe(t *testing.T) {
	needFUSE(t)
	st := filepath.Join(tmpfsDir(t, "cairn-e2e-serve-"), "store")
	mustCairn(t, "--store", st, "init")
	img := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(img, randBytes(1<<20, 29), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCairn(t, "--store", st, "backup", "--type", "vm", "--id", "100", "disk.img:"+img)
	env, next := notifySocket(t)
	mnt, addr := t.TempDir(), freePort(t)
	cmd := exec.Command(binPath, "--store", st, "serve", "--mount", mnt, "--listen", addr)
	cmd.Env = append(os.Environ(), env)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	done := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("cairn serve did not end after SIGKILL")
		}
		exec.Command("fusermount", "-u", "-z", mnt).Run()
	})
	if got := next(); got != "READY=1" {
		t.Fatalf("first notification %q, want READY=1", got)
	}
	if !inMountinfo(mnt) {
		t.Fatalf("ready, but %s is not mounted", mnt)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, body)
	}
	if err := os.WriteFile(filepath.Join(mnt, ".jobs", "verify", "control"), []byte("start\n"), 0); err != nil {
		t.Fatal(err)
	}
	var v struct {
		State  string
		Result struct {
			Snapshots []struct{ Snapshot, State string }
		}
	}
	jobStatus(t, mnt, "verify", "", &v)
	if v.State != "ok" || len(v.Result.Snapshots) != 1 {
		t.Errorf("verify job through the served mount: %+v", v)
	}
	if data, err := os.ReadFile(filepath.Join(mnt, "vm", "100", "latest", "disk.img")); err != nil || len(data) != 1<<20 {
		t.Errorf("the image through the mount: %d bytes, %v", len(data), err)
	}
	// SIGHUP reads the configuration again, as systemctl reload asks
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if a, b := next(), next(); a != "RELOADING=1" || b != "READY=1" {
		t.Errorf("notifications after SIGHUP %q, %q; want RELOADING=1, READY=1", a, b)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "STOPPING=1" {
		t.Errorf("notification after SIGTERM %q, want STOPPING=1", got)
	}
	select {
	case <-done:
		if waitErr != nil {
			t.Errorf("cairn serve after SIGTERM: %v\n%s", waitErr, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("cairn serve did not exit within a minute of SIGTERM\n%s", stderr.String())
	}
	if inMountinfo(mnt) {
		t.Errorf("%s still mounted after cairn serve exited", mnt)
	}
	if _, err := os.Stat(filepath.Join(st, ".cairn-serve", "history.json")); err != nil {
		t.Errorf("no size history in the store: %v", err)
	}
}
