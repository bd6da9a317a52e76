package pxar

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

func walkPaths(t *testing.T, w *Walker, skip string) []string {
	t.Helper()
	var got []string
	for {
		p, e, err := w.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == KindDir {
			p += "/"
		}
		got = append(got, p)
		if p == skip {
			w.SkipDir()
		}
	}
}

// TestWalker: a walk visits every entry once, each directory before its
// entries, in name order component by component (so "a/z" before "a.b"),
// SkipDir leaves a directory's entries out, and a walk may start below
// the root or at a file.
func TestWalker(t *testing.T) {
	root := dirNode("",
		dirNode("a", fileNode("z", []byte("z")), dirNode("d", fileNode("x", nil))),
		fileNode("a.b", []byte("ab")),
		dirNode("empty"),
		fileNode("0", nil),
	)
	for _, split := range []bool{false, true} {
		m, pl := encodeTree(t, root, split)
		a := openArchive(t, m, pl)
		got := walkPaths(t, a.Walk(a.Root()), "")
		want := []string{"/", "0", "a/", "a/d/", "a/d/x", "a/z", "a.b", "empty/"}
		if !slices.Equal(got, want) {
			t.Fatalf("split %v: walk %q, want %q", split, got, want)
		}
		if got := walkPaths(t, a.Walk(a.Root()), "a/"); strings.Join(got, " ") != "/ 0 a/ a.b empty/" {
			t.Errorf("SkipDir: %q", got)
		}
		sub, err := a.LookupPath(context.Background(), "a")
		if err != nil {
			t.Fatal(err)
		}
		if got := walkPaths(t, a.Walk(sub), ""); strings.Join(got, " ") != "/ d/ d/x z" {
			t.Errorf("walk of a: %q", got)
		}
		f, err := a.LookupPath(context.Background(), "a.b")
		if err != nil {
			t.Fatal(err)
		}
		if got := walkPaths(t, a.Walk(f), ""); len(got) != 1 || got[0] != "" {
			t.Errorf("walk of a file: %q", got)
		}
	}
}

// TestWalkerTooDeep: nesting deeper than MaxWalkDepth is an error, not a
// stack of readers without end.
func TestWalkerTooDeep(t *testing.T) {
	n := dirNode("d")
	top := n
	for range MaxWalkDepth {
		c := dirNode("d")
		n.children = []*node{c}
		n = c
	}
	m, _ := encodeTree(t, dirNode("", top), false)
	a := openArchive(t, m, nil)
	w := a.Walk(a.Root())
	for {
		_, _, err := w.Next(context.Background())
		if errors.Is(err, ErrTooDeep) {
			return
		}
		if err != nil {
			t.Fatalf("walk: %v, want ErrTooDeep", err)
		}
	}
}
