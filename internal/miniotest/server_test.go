package miniotest

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerOfKilledProcess: a test process killed with -9 leaves no
// MinIO running and no data behind (the wrapper sees its pipe close).
func TestServerOfKilledProcess(t *testing.T) {
	if os.Getenv("MINIOTEST_CHILD") == "1" {
		s := Start(t)
		fmt.Printf("%s %s\n", s.Endpoint, s.dir)
		time.Sleep(time.Hour) // until killed
		return
	}
	binaryOrSkip(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerOfKilledProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "MINIOTEST_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var endpoint, dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && strings.HasPrefix(f[0], "http://") {
			endpoint, dir = f[0], f[1]
			break
		}
	}
	if endpoint == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child printed no server")
	}
	if !live(endpoint) || !exists(dir) {
		t.Fatal("the child's server is not up, or has no data directory")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(60 * time.Second)
	for live(endpoint) || exists(dir) {
		if time.Now().After(deadline) {
			t.Fatalf("60 s after its test process was killed: server up %v, data %s there %v", live(endpoint), dir, exists(dir))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func live(endpoint string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(endpoint + "/minio/health/live")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
