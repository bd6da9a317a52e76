package pathlist

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead: comments and blank lines are left out, lines trimmed, globs
// expanded against the tree (one that matches nothing is a warning),
// absolute paths inside the tree taken; verbatim lines and raw entries
// are taken as they are.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.txt", "b.txt", "c"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, "list")
	body := "# comment\n\n  c  \n*.txt\n" + filepath.Join(dir, "d/e") + "\nnone*\n"
	if err := os.WriteFile(list, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	lists := []List{{"--files-from", list, Lines}, {"--files-from-raw", "-", Raw}}
	sel, err := Read(lists, dir, strings.NewReader(" sp ace\x00x\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sel.Select.Len(); got != 6 { // c, a.txt, b.txt, d/e, " sp ace", x
		t.Errorf("%d paths selected, want 6", got)
	}
	var w bytes.Buffer
	if n := sel.Warn(&w, "root.pxar"); n != 7 || !strings.Contains(w.String(), "pattern none* matches nothing") {
		t.Errorf("%d warnings:\n%s", n, w.String())
	}
	if !strings.Contains(w.String(), "d/e: not found: not backed up") {
		t.Errorf("warnings lack the missing path:\n%s", w.String())
	}
}

// TestReadRefused: what a list cannot hold is a *UsageError.
func TestReadRefused(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		format Format
		in     string
		want   string
	}{
		"outside":      {Lines, "../x\n", "is outside"},
		"absolute":     {Verbatim, "/elsewhere\n", "is outside"},
		"NUL in lines": {Lines, "a\x00b\n", "NUL byte"},
		"empty":        {Lines, "# nothing\n", "no path listed"},
		"long":         {Raw, strings.Repeat("x", maxListLine+1), "longer than"},
	} {
		_, err := Read([]List{{"--files-from", "-", c.format}}, dir, strings.NewReader(c.in))
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a usage error saying %q", name, err, c.want)
		}
	}
	lists := []List{{"--files-from", "-", Lines}, {"--files-from-raw", "-", Raw}}
	if _, err := Read(lists, dir, strings.NewReader("a\n")); err == nil || !strings.Contains(err.Error(), "read by an archive or another list") {
		t.Errorf("stdin read twice: %v", err)
	}
}

func TestRelative(t *testing.T) {
	p := &listParser{dir: "/t/d", real: "/r/d"}
	for in, want := range map[string]string{"a/../b": "b", ".": "", "/t/d": "", "/t/d/x/": "x", "/r/d/y": "y", "../d": "!", "/t/dx": "!"} {
		got, ok := p.relative(in)
		if !ok {
			got = "!"
		}
		if got != want {
			t.Errorf("relative(%q) = %q, want %q", in, got, want)
		}
	}
}
