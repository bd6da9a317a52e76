package test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// backup --exclude-file (restic's habit): the file's patterns, one a
// line, comments and blank lines skipped, CRLF and trailing spaces kept
// off, beside --exclude; a file that is not a regular file or is missing
// is a usage error at once.
func TestBackupExcludeFile(t *testing.T) {
	t.Parallel() // a store of its own
	st := filepath.Join(tmpfsDir(t, "cairn-e2e-"), "store")
	mustCairn(t, "--store", st, "init")
	src := t.TempDir()
	writeTree(t, src, map[string]string{"a.log": "1", "b.txt": "2", "sub/c.log": "3", "sub/keep.log": "4", "tmp/x": "5", "d.bak": "6"})
	ex := filepath.Join(t.TempDir(), "excludes")
	write(t, ex, "# logs but one\n*.log\r\n!keep.log   \n\n/tmp\n", 0o644)
	r := cairn(t, nil, "--store", st, "backup", "--type", "host", "--id", "ex", "--exclude-file", ex, "--exclude", "*.bak", "root.pxar:"+src)
	if r.code != 0 {
		t.Fatalf("backup: exit %d: %s", r.code, r.stderr)
	}
	out := filepath.Join(t.TempDir(), "out")
	mustCairn(t, "--store", st, "restore", "host/ex", "root.pxar", out)
	if got, want := files(t, out), []string{"b.txt", "sub/keep.log"}; !slices.Equal(got, want) {
		t.Fatalf("restored %q, want %q", got, want)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{fifo: "is a FIFO", filepath.Join(src, "sub"): "is a directory", filepath.Join(src, "absent"): "no such file"} {
		r := cairnBounded(t, "--store", st, "backup", "--type", "host", "--id", "ex", "--exclude-file", name, "root.pxar:"+src)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("--exclude-file %s: exit %d, want 2 saying %q: %s", name, r.code, want, r.stderr)
		}
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}
