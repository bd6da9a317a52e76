package test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLIProgressTree: the last plain progress line of a tree backup
// and restore (stderr is a pipe; the interval is long, so it is the
// only line) names the archive and counts the files, with their total;
// a tree restore shows no zeroes. A hostile archive name is quoted.
func TestCLIProgressTree(t *testing.T) {
	t.Parallel()
	st := filepath.Join(tmpfsDir(t, "cairn-e2e-"), "store")
	mustCairn(t, "--store", st, "init")
	src := t.TempDir()
	writeTree(t, src, map[string]string{"a": strings.Repeat("a", 5000), "b": "bb", "sub/c": "ccc", "sub/d": "", "sub/e/f": "f"})
	env := []string{"CAIRN_PROGRESS_INTERVAL=1h"}
	const hostile = "e\x1b[31m.pxar"
	for i, want := range []string{"first", "with a reference"} {
		r := cairn(t, env, "--store", st, "backup", "--type", "host", "--id", "pt", "--no-sync", "root.pxar:"+src, hostile+":"+src)
		line := regexp.MustCompile(`(?m)^backup host/pt/\S+ "e\\x1b\[31m\.pxar": 9\.8 KiB of 9\.8 KiB \(100\.0%\), 10 of 10 files, .*elapsed$`)
		if r.code != 0 || !line.MatchString(r.stderr) {
			t.Fatalf("backup %d (%s): exit %d, no last line naming the archive and counting 10 of 10 files:\n%s", i, want, r.code, r.stderr)
		}
	}
	for name, quoted := range map[string]string{"root.pxar": "root.pxar", hostile: `"e\x1b[31m.pxar"`} {
		r := cairn(t, env, "--store", st, "restore", "host/pt", name, filepath.Join(t.TempDir(), "out"))
		want := "restore " + quoted + ": 4.9 KiB, 5 of 5 files, "
		if r.code != 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "zeroes") || strings.Contains(r.stdout, "zeroes") || strings.Contains(r.stderr, "\x1b") {
			t.Errorf("restore %q: exit %d, want a last line %q, no zeroes, no escape:\n%s%s", name, r.code, want, r.stdout, r.stderr)
		}
	}
	// A part of the archive: the files it restores, no total.
	r := cairn(t, env, "--store", st, "restore", "--path", "sub", "host/pt", "root.pxar", filepath.Join(t.TempDir(), "out"))
	if r.code != 0 || !strings.Contains(r.stderr, "restore root.pxar: 4 B, 3 files, ") {
		t.Errorf("restore --path: exit %d:\n%s", r.code, r.stderr)
	}
}
