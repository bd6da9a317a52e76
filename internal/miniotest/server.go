package miniotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"golang.org/x/sys/unix"
)

// Server is a running MinIO server.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string

	bin     string
	addr    string
	dir     string // holds dataDir and logPath
	rmDir   bool   // the wrapper removes dir when it ends (shared server)
	dataDir string
	logPath string

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  *os.File      // the test's end of the wrapper's pipe
	exited chan struct{} // closed when the wrapper has ended
}

// startTimeout bounds the wait for a starting server (slow under -race on
// a loaded machine).
const startTimeout = 90 * time.Second

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Binary returns the MinIO binary to run, or "" when there is none.
func Binary() string {
	if b := os.Getenv("CAIRN_MINIO"); b != "" {
		return b
	}
	if b, err := exec.LookPath("minio"); err == nil {
		return b
	}
	if home, err := os.UserHomeDir(); err == nil {
		b := filepath.Join(home, ".cache", "cairn", "minio", "minio")
		if st, err := os.Stat(b); err == nil && st.Mode().IsRegular() {
			return b
		}
	}
	return ""
}

func binaryOrSkip(t testing.TB) string {
	t.Helper()
	b := Binary()
	if b == "" {
		if os.Getenv("CAIRN_TEST_REQUIRE_MINIO") == "1" {
			t.Fatal("miniotest: no MinIO binary ($CAIRN_MINIO, minio in PATH, ~/.cache/cairn/minio/minio) and CAIRN_TEST_REQUIRE_MINIO=1")
		}
		t.Skip("miniotest: no MinIO binary (set CAIRN_MINIO); skipping")
	}
	return b
}

// Start returns the test process's shared server, starting it on first
// use. Tests must not stop it: use StartOwn for that.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binaryOrSkip(t)
	sharedOnce.Do(func() {
		var dir string
		dir, sharedErr = os.MkdirTemp(fastTempDir(), "cairn-minio-")
		if sharedErr != nil {
			return
		}
		shared, sharedErr = launch(bin, dir, true)
		if sharedErr != nil {
			os.RemoveAll(dir)
		}
	})
	if sharedErr != nil {
		t.Fatalf("miniotest: %v", sharedErr)
	}
	return shared
}

// StartOwn starts a server for this test alone (stopped at its end): for
// tests that Stop and Restart it.
func StartOwn(t testing.TB) *Server {
	t.Helper()
	bin := binaryOrSkip(t)
	dir, err := os.MkdirTemp(fastTempDir(), "cairn-minio-")
	if err != nil {
		t.Fatalf("miniotest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s, err := launch(bin, dir, false)
	if err != nil {
		t.Fatalf("miniotest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// fastTempDir is where a server keeps its data: /dev/shm when it is a
// writable directory, else "" (os.TempDir). A server's writes on a
// loaded disk cost system time and waiting that the tests do not need
// (as storetest.FastTempDir, which cannot be imported here: storetest
// imports this package).
func fastTempDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// launch starts a server on a free port, trying a few ports (another
// process may take the one found free before MinIO binds it). Its data
// and log are in dir (removed by the wrapper when it ends if rmDir).
func launch(bin, dir string, rmDir bool) (*Server, error) {
	var err error
	for range 3 {
		var addr string
		addr, err = freeAddr()
		if err != nil {
			return nil, err
		}
		s := &Server{
			Endpoint:  "http://" + addr,
			AccessKey: "cairn" + randomHex(6),
			SecretKey: randomHex(16),
			bin:       bin, addr: addr, dir: dir, rmDir: rmDir,
			dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "minio.log"),
		}
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// wrapper runs MinIO until its stdin closes (the test process ended or
// Stop), then stops it and removes the data directory when asked.
const wrapper = `"$@" & p=$!
cat >/dev/null
kill $p 2>/dev/null
wait $p
if [ -n "$CAIRN_MINIO_RMDIR" ]; then rm -rf -- "$CAIRN_MINIO_RMDIR"; fi
`

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("server %s already running", s.addr)
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command("sh", "-c", wrapper, "minio-wrapper",
		s.bin, "server", "--quiet", "--address", s.addr, s.dataDir)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	if s.rmDir {
		cmd.Env = append(cmd.Env, "CAIRN_MINIO_RMDIR="+s.dir)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, logf, logf
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("starting %s: %w", s.bin, err)
	}
	r.Close()
	s.cmd, s.stdin = cmd, w
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	err = waitReady(s.Endpoint, exited)
	if err == nil {
		err = waitIAM(s.Endpoint, exited)
	}
	if err != nil {
		w.Close()
		<-exited
		s.cmd, s.stdin = nil, nil
		return fmt.Errorf("MinIO on %s: %w (log: %s)", s.addr, err, tail(s.logPath))
	}
	s.exited = exited
	return nil
}

// waitReady polls the health endpoints until the server answers.
func waitReady(endpoint string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for _, path := range []string{"/minio/health/live", "/minio/health/ready"} {
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+path, nil)
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			select {
			case <-exited:
				return fmt.Errorf("exited before it was ready")
			case <-ctx.Done():
				return fmt.Errorf("not ready after %v", startTimeout)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// waitIAM waits until MinIO's IAM subsystem answers: the health endpoints
// say ready before it does, and until then every signed request fails with
// XMinioIAMNotInitialized (a test of a wrong key saw that, not AccessDenied).
// The probe signs with a key that does not exist, so any answer but that
// one means IAM is up.
func waitIAM(endpoint string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	client, err := minio.New(strings.TrimPrefix(endpoint, "http://"), &minio.Options{
		Creds:  credentials.NewStaticV4("miniotest-probe", "miniotest-probe-secret", ""),
		Region: "us-east-1",
	})
	if err != nil {
		return err
	}
	for {
		_, err := client.ListBuckets(ctx)
		if minio.ToErrorResponse(err).Code != "XMinioIAMNotInitialized" && ctx.Err() == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before its IAM was ready")
		case <-ctx.Done():
			return fmt.Errorf("IAM not ready after %v", startTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}
