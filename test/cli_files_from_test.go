package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// filesFromStore is the shared store, a group of the test's own, and a
// tree to select from.
func filesFromStore(t *testing.T) (st, id, src string) {
	t.Helper()
	st, id = e2e.SharedStore(t), t.Name()
	src = t.TempDir()
	e2e.WriteTree(t, src, map[string]string{"a/b/x": "1", "a/b/y": "2", "a/bx": "3", "a/c": "4", "a-b": "5",
		"d/e.conf": "6", "d/f.conf": "7", "d/g.txt": "8", "h": "9", "sp ace": "10", "nl\nname": "11", "bad\xffname": "12"})
	return st, id, src
}

// restored backs up root.pxar:src with args and returns the files a
// restore of it holds.
func restored(t *testing.T, st, id, src string, stdin []byte, args ...string) ([]string, e2e.Result) {
	t.Helper()
	all := append([]string{"--store", st, "backup", "--type", "host", "--id", id}, args...)
	r := e2e.CairnStdin(t, nil, stdin, append(all, "root.pxar:"+src)...)
	if r.Code != 0 && r.Code != 3 {
		t.Fatalf("backup %q: exit %d: %s", args, r.Code, r.Stderr)
	}
	out := filepath.Join(t.TempDir(), "out")
	e2e.MustCairn(t, "--store", st, "restore", "host/"+id, "root.pxar", out)
	return e2e.Files(t, out), r
}

// backup --files-from (restic's): the listed paths, relative to the
// tree's directory or absolute inside it, with everything below them and
// the directories above them; # comments, blank lines, spaces and a CR
// dropped, globs expanded; --files-from-verbatim takes lines as they are,
// --files-from-raw NUL-separated names (a newline in one), "-" standard
// input; a name that is not UTF-8 is a name like another.
func TestBackupFilesFrom(t *testing.T) {
	st, id, src := filesFromStore(t)
	list := filepath.Join(t.TempDir(), "list")
	e2e.Write(t, list, "# what to keep\na/b\n\n  "+filepath.Join(src, "h")+"  \r\nd/*.conf\nbad\xffname\n", 0o644)
	got, _ := restored(t, st, id, src, nil, "--files-from", list)
	want := []string{"a/b/x", "a/b/y", "bad\xffname", "d/e.conf", "d/f.conf", "h"}
	if !slices.Equal(got, want) {
		t.Errorf("--files-from: restored %q, want %q", got, want)
	}
	e2e.Write(t, list, "sp ace\n", 0o644)
	got, _ = restored(t, st, id, src, []byte("nl\nname\x00a/c\x00"), "--files-from-verbatim", list, "--files-from-raw", "-")
	if want := []string{"a/c", "nl\nname", "sp ace"}; !slices.Equal(got, want) {
		t.Errorf("--files-from-verbatim and --files-from-raw -: restored %q, want %q", got, want)
	}
}

// A listed path that is not there is reported with its list and line,
// and the backup of the others goes on (exit 3, as for an unreadable
// file: a list made by find may name a file removed since).
func TestBackupFilesFromMissing(t *testing.T) {
	st, id, src := filesFromStore(t)
	if err := os.Symlink("a", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(t.TempDir(), "list")
	e2e.Write(t, list, "h\ngone\nlink/c\n", 0o644)
	got, r := restored(t, st, id, src, nil, "--files-from", list)
	if r.Code != 3 || !slices.Equal(got, []string{"h"}) {
		t.Fatalf("exit %d, restored %q: want 3 and h", r.Code, got)
	}
	for _, want := range []string{"--files-from " + list + " line 2: gone: not found", "line 3: link/c: not backed up: below a symbolic link"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr does not say %q: %s", want, r.Stderr)
		}
	}
}

// Lists that cannot be what the user meant are refused before anything
// is written (exit 2), naming the list, the line and what is wrong.
func TestBackupFilesFromHostile(t *testing.T) {
	st, id, src := filesFromStore(t)
	dir := t.TempDir()
	lists := map[string]string{"outside": "h\n../etc/passwd\n", "absolute": "/etc/passwd\n", "nul": "h\x00/etc\n",
		"long": strings.Repeat("x", 70<<10) + "\n", "empty": "# nothing\n\n", "glob": "[\n"}
	for name, content := range lists {
		e2e.Write(t, filepath.Join(dir, name), content, 0o644)
	}
	img := filepath.Join(dir, "img")
	e2e.Write(t, img, "data", 0o644)
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--files-from", p("absent"), "root.pxar:" + src}, p("absent") + ": no such file"},
		{[]string{"--files-from", p("outside"), "root.pxar:" + src}, "line 2: ../etc/passwd is outside " + src},
		{[]string{"--files-from", p("absolute"), "root.pxar:" + src}, "line 1: /etc/passwd is outside"},
		{[]string{"--files-from", p("nul"), "root.pxar:" + src}, "line 1 holds a NUL byte"},
		{[]string{"--files-from-verbatim", p("long"), "root.pxar:" + src}, "line 1: longer than 64 KiB"},
		{[]string{"--files-from", p("empty"), "root.pxar:" + src}, p("empty") + ": no path listed"},
		{[]string{"--files-from", p("glob"), "root.pxar:" + src}, "line 1: pattern [: syntax error"},
		{[]string{"--files-from", dir, "root.pxar:" + src}, "is a directory"},
		{[]string{"--files-from", p("absolute"), "a.pxar:" + src, "b.pxar:" + src}, "one directory tree: give one NAME.pxar:DIR (2 given)"},
		{[]string{"--files-from", "-", "i.img:-", "root.pxar:" + src}, "standard input is read by an archive"},
	} {
		r := e2e.CairnStdin(t, nil, []byte("h\n"), append([]string{"--store", st, "backup", "--type", "host", "--id", id}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 saying %q: %s", c.args, r.Code, c.want, r.Stderr)
		}
	}
	if r := e2e.Cairn(t, nil, "--store", st, "snapshots", "host/"+id); strings.Contains(r.Stdout, "host/"+id+"/") {
		t.Errorf("a refused list made a snapshot: %s", r.Stdout)
	}
}

// A million lines: each a path (most of them missing, named up to a
// bound, then counted), sorted and searched, not scanned per entry.
func TestBackupFilesFromMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("a million-line list")
	}
	st, id, src := filesFromStore(t)
	var b strings.Builder
	for i := range 1_000_000 {
		fmt.Fprintf(&b, "gone/%07d\n", i)
	}
	b.WriteString("a/c\n")
	list := filepath.Join(t.TempDir(), "list")
	e2e.Write(t, list, b.String(), 0o644)
	got, r := restored(t, st, id, src, nil, "--files-from", list)
	if r.Code != 3 || !slices.Equal(got, []string{"a/c"}) {
		t.Fatalf("exit %d, restored %q: want 3 and a/c", r.Code, got)
	}
	if n := strings.Count(r.Stderr, "\n"); n > 1010 || !strings.Contains(r.Stderr, "999000 more listed paths not backed up") {
		t.Errorf("%d lines of warnings, want the first 1000 and a count: %s", n, e2e.Tail(r.Stderr))
	}
}
