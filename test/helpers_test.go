package test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/store/storetest"
)

var (
	binPath string

	storeOnce sync.Once
	storeDir  string
	storeErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "cairn")
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	build := exec.Command("go", "build", "-race", "-o", binPath, "./cmd/cairn")
	if os.Getenv("CAIRN_E2E_NORACE") == "1" {
		build = exec.Command("go", "build", "-o", binPath, "./cmd/cairn")
	}
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build cairn:", err)
		os.Exit(1)
	}
	setParallel(4)
	code := m.Run()
	os.RemoveAll(dir)
	if storeDir != "" {
		os.RemoveAll(filepath.Dir(storeDir))
	}
	os.Exit(code)
}

// setParallel runs up to n parallel tests at once unless -parallel was
// given: the end-to-end tests mostly wait (on the binary's I/O, FUSE,
// MinIO and its latency proxy), so the default of one per core leaves the
// two cores of CI idle for most of the package's run.
func setParallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// result is what one run of the binary did.
type result struct {
	code           int
	stdout, stderr string
}

// cairn runs the binary with args; env adds variables.
func cairn(t testing.TB, env []string, args ...string) result {
	t.Helper()
	return cairnStdin(t, env, nil, args...)
}

// cairnStdin is cairn with stdin (a pipe) as standard input if not nil.
func cairnStdin(t testing.TB, env []string, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run cairn %v: %v", args, err)
	}
	return r
}

// mustCairn runs the binary and fails the test unless it exits 0.
func mustCairn(t testing.TB, args ...string) result {
	t.Helper()
	r := cairn(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("cairn %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// sharedStore returns a store made once with `cairn init` for all tests
// of this package (init makes 65,536 directories: seconds on some disks).
// Tests use groups of their own.
func sharedStore(t testing.TB) string {
	t.Helper()
	storeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-e2e-store-")
		if err != nil {
			storeErr = err
			return
		}
		storeDir = filepath.Join(dir, "store")
		r := cairn(t, nil, "--store", storeDir, "init")
		if r.code != 0 {
			storeErr = fmt.Errorf("init: %s", r.stderr)
		}
	})
	if storeErr != nil {
		t.Fatal(storeErr)
	}
	return storeDir
}

var randBytes = storetest.RandSeeded

// sparseImage writes an image with data, holes, written zeros and a
// repeated region; it returns the path and the expected bytes.
func sparseImage(t testing.TB, size int, seed uint64) (string, []byte) {
	t.Helper()
	img := make([]byte, size)
	path := filepath.Join(t.TempDir(), "disk.raw")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	write := func(off int, b []byte) {
		copy(img[off:], b)
		if _, err := f.WriteAt(b, int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	data := randBytes(size/8, seed)
	write(0, data)                      // data
	write(size/2, data[:size/16])       // repeated data
	write(size/4, make([]byte, size/8)) // written zeros
	write(size-5000, randBytes(5000, seed+1))
	return path, img
}
