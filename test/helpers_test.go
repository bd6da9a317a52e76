package test

//lint:file-ignore U1000 every end-to-end package has these same wrappers, so that a test file moves between them unchanged; not every package uses all of them.

import (
	"os"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// Thin wrappers of the fixtures in test/e2e under the names the test
// files call; see test/e2e's package doc.

var binPath string

func TestMain(m *testing.M) {
	binPath = e2e.Build()
	os.Exit(e2e.Main(m))
}

// result is what one run of the binary did.
type result struct {
	code           int
	stdout, stderr string
}

func res(r e2e.Result) result { return result{code: r.Code, stdout: r.Stdout, stderr: r.Stderr} }

// cairn runs the binary with args; env adds variables.
func cairn(t testing.TB, env []string, args ...string) result {
	t.Helper()
	return res(e2e.Cairn(t, env, args...))
}

// cairnStdin is cairn with stdin (a pipe) as standard input if not nil.
func cairnStdin(t testing.TB, env []string, stdin []byte, args ...string) result {
	t.Helper()
	return res(e2e.CairnStdin(t, env, stdin, args...))
}

// mustCairn runs the binary and fails the test unless it exits 0.
func mustCairn(t testing.TB, args ...string) result {
	t.Helper()
	return res(e2e.MustCairn(t, args...))
}

// cairnBounded runs the binary with a minute's deadline.
func cairnBounded(t *testing.T, args ...string) result {
	t.Helper()
	return res(e2e.CairnBounded(t, args...))
}

// sharedStore is the store made once for all tests of this package.
func sharedStore(t testing.TB) string {
	t.Helper()
	return e2e.SharedStore(t)
}

var randBytes = e2e.RandBytes

func sparseImage(t testing.TB, size int, seed uint64) (string, []byte) {
	t.Helper()
	return e2e.SparseImage(t, size, seed)
}

func tmpfsDir(t *testing.T, prefix string) string {
	t.Helper()
	return e2e.TmpfsDir(t, prefix)
}

func needFUSE(t *testing.T) {
	t.Helper()
	e2e.NeedFUSE(t)
}

func mountStore(t *testing.T, st string, args ...string) string {
	t.Helper()
	return e2e.MountStore(t, st, args...)
}

func daemonMount(t *testing.T, st string, args ...string) (mnt string, pid int, log string) {
	t.Helper()
	return e2e.DaemonMount(t, st, args...)
}

func inMountinfo(dir string) bool { return e2e.InMountinfo(dir) }

func waitGone(pid int) bool { return e2e.WaitGone(pid) }

func waitJob(t *testing.T, status string) string {
	t.Helper()
	return e2e.WaitJob(t, status)
}

func jobStatus(t *testing.T, mnt, kind, before string, v any) string {
	t.Helper()
	return e2e.JobStatus(t, mnt, kind, before, v)
}

func files(t *testing.T, root string) []string {
	t.Helper()
	return e2e.Files(t, root)
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	return e2e.Names(t, dir)
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	e2e.Write(t, path, content, mode)
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	e2e.WriteTree(t, root, files)
}

func writePass(t *testing.T, dir, name, pass string) string {
	t.Helper()
	return e2e.WritePass(t, dir, name, pass)
}

func treeListing(t *testing.T, root string) string {
	t.Helper()
	return e2e.TreeListing(t, root)
}

func tail(s string) string { return e2e.Tail(s) }

func s1(s []string) string { return s[1] }

func decodeJSON(t *testing.T, r result, v any) {
	t.Helper()
	e2e.DecodeJSON(t, r.stdout, r.stderr, v)
}

var uniqueNS = e2e.UniqueNS

func tapeBackup(t *testing.T, st, ns, id, at string, data []byte) string {
	t.Helper()
	return e2e.TapeBackup(t, st, ns, id, at, data)
}

type tapeExportResult = e2e.TapeExportResult

func backupsOf(t *testing.T, st, id string, n int) []string {
	t.Helper()
	return e2e.BackupsOf(t, st, id, n)
}

type pxarSummary = e2e.PxarSummary

func parsePxarSummary(t *testing.T, out string) pxarSummary {
	t.Helper()
	return e2e.ParsePxarSummary(t, out)
}
