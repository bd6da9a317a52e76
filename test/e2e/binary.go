package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// binDir holds the binary built by Build; removed by Main.
var binDir, binPath string

// Build builds cairn (with -race unless CAIRN_E2E_NORACE=1) into a
// temporary directory and returns its path; it exits the process if the
// build fails. The end-to-end packages start side by side: a lock file
// lets one of them build at a time, so that the others find the
// compiled packages in the build cache and only link (2 s of CPU
// instead of compiling the race-instrumented sources again each).
func Build() string {
	if unlock := buildLock(); unlock != nil {
		defer unlock()
	}
	dir, err := os.MkdirTemp("", "cairn-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir, binPath = dir, filepath.Join(dir, "cairn")
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
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
	return binPath
}

// buildLock takes an exclusive lock on a file in the temporary directory
// (waiting for it) and returns its release, or nil if there is none to
// take: then the builds just run at once.
func buildLock() func() {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "cairn-e2e-build.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil
	}
	return func() { f.Close() }
}

// Main runs the tests of a package whose TestMain called Build, up to
// four at once unless -parallel was given, removes the binary and the
// shared store, and returns the exit code for os.Exit.
func Main(m *testing.M) int {
	setParallel(4)
	noRaceExitSleep()
	code := m.Run()
	os.RemoveAll(binDir)
	removeSharedStore()
	return code
}

// noRaceExitSleep sets GORACE=atexit_sleep_ms=0 for the binaries the
// tests start, unless GORACE already sets it. A race-enabled program
// sleeps a second before it exits by default, so that goroutines still
// running after main returns may yet report a race; every run of the
// binary (hundreds per package) waited that second. Races in the work
// a command does before it exits are reported as before: exit code 66
// and the report on stderr, which the tests see.
func noRaceExitSleep() {
	v := os.Getenv("GORACE")
	if strings.Contains(v, "atexit_sleep_ms") {
		return
	}
	os.Setenv("GORACE", strings.TrimSpace(v+" atexit_sleep_ms=0"))
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

// Result is what one run of the binary did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Cairn runs the binary with args; env adds variables.
func Cairn(t testing.TB, env []string, args ...string) Result {
	t.Helper()
	return CairnStdin(t, env, nil, args...)
}

// CairnStdin is Cairn with stdin (a pipe) as standard input if not nil.
// It runs the command in-process where it can (inProcess), else in the
// binary.
func CairnStdin(t testing.TB, env []string, stdin []byte, args ...string) Result {
	t.Helper()
	if inProcess(env, args) {
		return RunInProcess(context.Background(), env, stdin, args...)
	}
	return CairnBinary(t, env, stdin, args...)
}

// CairnBinary runs the binary with args, env added to its environment
// and stdin (a pipe) as standard input if not nil.
func CairnBinary(t testing.TB, env []string, stdin []byte, args ...string) Result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run cairn %v: %v", args, err)
	}
	return r
}

// MustCairn runs the binary and fails the test unless it exits 0.
func MustCairn(t testing.TB, args ...string) Result {
	t.Helper()
	r := Cairn(t, nil, args...)
	if r.Code != 0 {
		t.Fatalf("cairn %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// Binary is the path of the binary Build built (for a test that drives
// its process itself: a standard input that pauses, signals).
func Binary() string { return binPath }
