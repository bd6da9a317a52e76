package test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestCLIProgressTree: the last plain progress line of a tree backup
// and restore (stderr is a pipe; the interval is long, so it is the
// only line) names the archive and counts the files, with their total;
// a tree restore shows no zeroes. A hostile archive name is quoted.
func TestCLIProgressTree(t *testing.T) {
	t.Parallel()
	st := e2e.OwnStore(t, "cairn-e2e-")
	src := t.TempDir()
	e2e.WriteTree(t, src, map[string]string{"a": strings.Repeat("a", 5000), "b": "bb", "sub/c": "ccc", "sub/d": "", "sub/e/f": "f"})
	env := []string{"CAIRN_PROGRESS_INTERVAL=1h"}
	const hostile = "e\x1b[31m.pxar"
	for i, want := range []string{"first", "with a reference"} {
		r := e2e.Cairn(t, env, "--store", st, "backup", "--type", "host", "--id", "pt", "--no-sync", "root.pxar:"+src, hostile+":"+src)
		line := regexp.MustCompile(`(?m)^backup host/pt/\S+ "e\\x1b\[31m\.pxar": 9\.8 KiB of 9\.8 KiB \(100\.0%\), 10 of 10 files, .*elapsed$`)
		if r.Code != 0 || !line.MatchString(r.Stderr) {
			t.Fatalf("backup %d (%s): exit %d, no last line naming the archive and counting 10 of 10 files:\n%s", i, want, r.Code, r.Stderr)
		}
	}
	for name, quoted := range map[string]string{"root.pxar": "root.pxar", hostile: `"e\x1b[31m.pxar"`} {
		r := e2e.Cairn(t, env, "--store", st, "restore", "host/pt", name, filepath.Join(t.TempDir(), "out"))
		want := "restore " + quoted + ": 4.9 KiB, 5 of 5 files, "
		if r.Code != 0 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "zeroes") || strings.Contains(r.Stdout, "zeroes") || strings.Contains(r.Stderr, "\x1b") {
			t.Errorf("restore %q: exit %d, want a last line %q, no zeroes, no escape:\n%s%s", name, r.Code, want, r.Stdout, r.Stderr)
		}
	}
	// A part of the archive: the files it restores, no total.
	r := e2e.Cairn(t, env, "--store", st, "restore", "--path", "sub", "host/pt", "root.pxar", filepath.Join(t.TempDir(), "out"))
	if r.Code != 0 || !strings.Contains(r.Stderr, "restore root.pxar: 4 B, 3 files, ") {
		t.Errorf("restore --path: exit %d:\n%s", r.Code, r.Stderr)
	}
}
