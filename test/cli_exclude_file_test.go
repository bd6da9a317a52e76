package test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// backup --exclude-file (restic's habit): the file's patterns, one a
// line, comments and blank lines skipped, CRLF and trailing spaces kept
// off, beside --exclude; a file that is not a regular file or is missing
// is a usage error at once.
func TestBackupExcludeFile(t *testing.T) {
	t.Parallel() // a store of its own
	st := e2e.OwnStore(t, "cairn-e2e-")
	src := t.TempDir()
	e2e.WriteTree(t, src, map[string]string{"a.log": "1", "b.txt": "2", "sub/c.log": "3", "sub/keep.log": "4", "tmp/x": "5", "d.bak": "6"})
	ex := filepath.Join(t.TempDir(), "excludes")
	e2e.Write(t, ex, "# logs but one\n*.log\r\n!keep.log   \n\n/tmp\n", 0o644)
	r := e2e.Cairn(t, nil, "--store", st, "backup", "--type", "host", "--id", "ex", "--exclude-file", ex, "--exclude", "*.bak", "root.pxar:"+src)
	if r.Code != 0 {
		t.Fatalf("backup: exit %d: %s", r.Code, r.Stderr)
	}
	out := filepath.Join(t.TempDir(), "out")
	e2e.MustCairn(t, "--store", st, "restore", "host/ex", "root.pxar", out)
	if got, want := e2e.Files(t, out), []string{"b.txt", "sub/keep.log"}; !slices.Equal(got, want) {
		t.Fatalf("restored %q, want %q", got, want)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{fifo: "is a FIFO", filepath.Join(src, "sub"): "is a directory", filepath.Join(src, "absent"): "no such file"} {
		r := e2e.CairnBounded(t, "--store", st, "backup", "--type", "host", "--id", "ex", "--exclude-file", name, "root.pxar:"+src)
		if r.Code != 2 || !strings.Contains(r.Stderr, want) {
			t.Errorf("--exclude-file %s: exit %d, want 2 saying %q: %s", name, r.Code, want, r.Stderr)
		}
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}
