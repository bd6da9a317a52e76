package restore

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// restoredPaths lists every path below root (relative, sorted).
func restoredPaths(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// TestTreeFilter restores makeTree's archive through filters and checks
// exactly what came out: excluded subtrees, included entries with the
// directories on their way (with their modes), a hard link whose target
// is excluded restored as a copy, and patterns relative to the archive
// root under a partial restore.
func TestTreeFilter(t *testing.T) {
	src := makeTree(t)
	acc, _, _ := archive(t, src)
	run := func(start, include, exclude []string) []string {
		t.Helper()
		f, err := NewFilter(include, exclude)
		if err != nil {
			t.Fatal(err)
		}
		e, path := acc.Root(), ""
		if len(start) > 0 {
			path = start[0]
			if e, err = acc.LookupPath(context.Background(), path); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(t.TempDir(), "out")
		if _, err := Tree(context.Background(), acc, e, path, out, TreeOptions{Filter: f}); err != nil {
			t.Fatalf("include %q exclude %q: %v", include, exclude, err)
		}
		return restoredPaths(t, out)
	}
	cases := []struct {
		start, include, exclude, want []string
	}{
		{nil, nil, []string{"/a", "fifo", "null", "sock", "odd*"}, nil},
		{nil, []string{"empty", "/a/ro"}, nil, []string{"a", "a/b c", "a/b c/empty", "a/ro"}},
		{nil, []string{"/a/b c"}, []string{"d/", "link"}, []string{"a", "a/b c", "a/b c/empty"}},
		{nil, []string{"hard"}, nil, []string{"a", "a/b c", "a/b c/d", "a/b c/d/hard"}},
		{[]string{"a/b c"}, []string{"/a/b c/d"}, nil, []string{"d", "d/hard"}},
		{[]string{"a/b c"}, nil, []string{"/a/b c/d", "/a/b c/empty"}, []string{"link"}},
		{nil, []string{"no-such"}, nil, nil},
	}
	for _, c := range cases {
		if got := run(c.start, c.include, c.exclude); !slices.Equal(got, c.want) {
			t.Errorf("start %q include %q exclude %q: got %q, want %q", c.start, c.include, c.exclude, got, c.want)
		}
	}
	// the copy of a hard link whose target was left out has its content
	out := filepath.Join(t.TempDir(), "out")
	f, _ := NewFilter([]string{"hard"}, nil)
	if _, err := Tree(context.Background(), acc, acc.Root(), "", out, TreeOptions{Filter: f}); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(src, "a", "data.bin"))
	got, err := os.ReadFile(filepath.Join(out, "a", "b c", "d", "hard"))
	if err != nil || string(got) != string(want) {
		t.Fatalf("hard link copy: %d bytes, %v", len(got), err)
	}
	if fi, err := os.Stat(filepath.Join(out, "a")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("a directory on the way: %v %v, want 0750", fi, err)
	}
	if _, err := NewFilter([]string{"[a"}, nil); err == nil {
		t.Error("a bad pattern was taken")
	}
}

// TestTreeInterrupted cancels a restore before it starts walking: the
// error is the context's, the report says where it stopped, and the
// marker is in the target; a complete restore with Overwrite removes it.
func TestTreeInterrupted(t *testing.T) {
	src := makeTree(t)
	acc, _, _ := archive(t, src)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Tree(ctx, acc, acc.Root(), "", out, TreeOptions{})
	if err == nil || ctx.Err() == nil || rep == nil {
		t.Fatalf("cancelled restore: %v %v", rep, err)
	}
	if len(rep.Failed) != 0 {
		t.Errorf("the cancellation was reported as failed paths: %v", rep.Failed)
	}
	if rep.StoppedAt == "" || rep.Marker != filepath.Join(out, IncompleteMarker) {
		t.Fatalf("report: stopped at %q, marker %q", rep.StoppedAt, rep.Marker)
	}
	if _, err := os.Stat(rep.Marker); err != nil {
		t.Fatal(err)
	}
	if _, err := Tree(context.Background(), acc, acc.Root(), "", out, TreeOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(out, IncompleteMarker)); err == nil {
		t.Fatal("the marker survived a complete restore")
	}
}

// TestTreeInterruptedSingle: an interrupted restore of one file removes
// the partial file it made, and only that.
func TestTreeInterruptedSingle(t *testing.T) {
	src := makeTree(t)
	acc, _, _ := archive(t, src)
	e, err := acc.LookupPath(context.Background(), "a/rw-all")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rw-all")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Tree(ctx, acc, e, "a/rw-all", out, TreeOptions{})
	if err == nil || rep == nil || !rep.Removed {
		t.Fatalf("cancelled single-file restore: %+v %v", rep, err)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Fatal("the partial file is still there")
	}
	if _, err := Tree(context.Background(), acc, e, "a/rw-all", out, TreeOptions{}); err != nil {
		t.Fatal(err)
	}
}
