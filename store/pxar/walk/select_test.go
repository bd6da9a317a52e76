package walk

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
)

// archivedPaths lists every entry of a, root left out.
func archivedPaths(t *testing.T, a *pxar.Accessor) []string {
	t.Helper()
	var out []string
	w := a.Walk(a.Root())
	for {
		p, _, err := w.Next(context.Background())
		if err == io.EOF {
			return out
		}
		must(t, err)
		if p != "" {
			out = append(out, p)
		}
	}
}

// A selection takes its paths with everything below them and the
// directories above them; a name that only shares a prefix is not
// taken; listed paths left out by patterns are met, those below a
// symbolic link or missing are not.
func TestWalkSelection(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a/b/c", "a/b/d/e", "a/bx", "a/c", "a-b", "ex/y", "f", "g/h"} {
		writeFile(t, filepath.Join(root, f), f)
	}
	must(t, os.Symlink("a", filepath.Join(root, "link")))
	sel := NewSelection([]SelectPath{{"a/b", 1}, {"ex/y", 2}, {"f", 3}, {"link/b", 4}, {"zz", 5}, {"a/b", 6}})
	for _, split := range []bool{true, false} {
		for _, ra := range []bool{true, false} {
			s := NewSelection(slices.Clone(sel.paths))
			a, st, _, _ := walkTo(t, root, split, Options{Select: s, Exclude: []string{"/ex"}, ReadAhead: ReadAhead{Off: !ra}})
			want := []string{"a", "a/b", "a/b/c", "a/b/d", "a/b/d/e", "f"}
			got := slices.DeleteFunc(archivedPaths(t, a), func(p string) bool { return p == cliName }) // the patterns, single-stream
			if !slices.Equal(got, want) {
				t.Errorf("split %v, read-ahead %v: archived %q, want %q", split, ra, got, want)
			}
			if st.Excluded != 6 { // a/bx, a/c, a-b, ex (pattern), g, link
				t.Errorf("excluded %d, want 6", st.Excluded)
			}
			if got, n := s.Unmet(1); n != 2 || !slices.Equal(got, []SelectPath{{"link/b", 4}}) {
				t.Errorf("unmet %v of %d, want link/b (origin 4) of 2 (zz)", got, n)
			}
		}
	}
}
