package pxar

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
)

// TestReadDirSorted lists every directory of the rich tree in stored
// order and checks it against the model's sorted children and against
// the hash-ordered listing.
func TestReadDirSorted(t *testing.T) {
	tree := richTree()
	meta, payload := encodeTree(t, tree, true)
	a := openArchive(t, meta, payload)
	var check func(dir *Entry, n *node, path string)
	check = func(dir *Entry, n *node, path string) {
		ctx := context.Background()
		r, err := a.ReadDirSorted(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if r.Len() != len(n.children) {
			t.Fatalf("%q: %d entries, want %d", path, r.Len(), len(n.children))
		}
		for i := 0; ; i++ {
			e, err := r.Next(ctx)
			if errors.Is(err, io.EOF) {
				if i != len(n.children) {
					t.Fatalf("%q: ended after %d entries", path, i)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			c := n.children[i]
			if e.Name != c.name {
				t.Fatalf("%q: entry %d is %q, want %q", path, i, e.Name, c.name)
			}
			want, err := a.Lookup(ctx, dir, c.name)
			if err != nil || want.ID != e.ID || !want.Metadata.Equal(&e.Metadata) {
				t.Fatalf("%q/%q: sorted entry %+v, lookup %+v %v", path, c.name, e, want, err)
			}
			if e.Kind == KindDir {
				check(e, c, path+"/"+c.name)
			}
		}
	}
	check(a.Root(), tree, "")
}

func TestReadDirSortedLarge(t *testing.T) {
	const n = 5000
	meta, payload := bigDir(t, n)
	a := openArchive(t, meta, payload)
	names := sortedNames(t, a, a.Root())
	if len(names) != n || !slices.IsSorted(names) {
		t.Fatalf("%d names, sorted %v", len(names), slices.IsSorted(names))
	}
	if _, err := a.ReadDirSorted(context.Background(), &Entry{Kind: KindFile}); !errors.Is(err, ErrNotDir) {
		t.Fatalf("file listed: %v", err)
	}
}
