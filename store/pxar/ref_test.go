package pxar

import (
	"context"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestReload decodes every entry of the rich tree (hard links, devices,
// xattrs, ACLs, nested directories) again from its Ref alone: it equals
// what the listing gave, but for its path, and a reloaded directory
// lists and looks up as the original. Refs of garbage fail without a
// panic.
func TestReload(t *testing.T) {
	for _, split := range []bool{true, false} {
		meta, payload := encodeTree(t, richTree(), split)
		a := openArchive(t, meta, payload)
		ctx := context.Background()
		n := 0
		var visit func(dir *Entry)
		visit = func(dir *Entry) {
			r, err := a.ReadDirSorted(ctx, dir)
			must(t, err)
			for {
				e, err := r.Next(ctx)
				if err == io.EOF {
					break
				}
				must(t, err)
				got, err := a.Reload(ctx, e.Ref())
				must(t, err)
				if want := *e; got.parent != nil || !reflect.DeepEqual(withParent(got, nil), withParent(&want, nil)) {
					t.Fatalf("split=%v %s: reloaded %+v, want %+v", split, e.Path(), *got, want)
				}
				n++
				if e.Kind == KindDir {
					if e.Len() > 0 {
						first, err := r2first(ctx, a, e)
						must(t, err)
						again, err := a.Lookup(ctx, got, first.Name)
						must(t, err)
						if again.ID != first.ID {
							t.Fatalf("lookup in reloaded %s: %d, want %d", e.Path(), again.ID, first.ID)
						}
					}
					visit(got)
				}
			}
		}
		visit(a.Root())
		if root, err := a.Reload(ctx, Ref{}); err != nil || root != a.Root() || n < 20 {
			t.Fatalf("root %v %v, %d entries", root, err, n)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		size := uint64(len(meta))
		for range 20000 {
			r := Ref{at: rng.Uint64N(size + 64), size: rng.Uint64N(size + 64), end: rng.Uint64N(size + 64), hash: rng.Uint64()}
			if rng.IntN(2) == 0 {
				r.hash = HashFilename("f1")
			}
			a.Reload(ctx, r) // must not panic or hang
		}
	}
}

func withParent(e *Entry, p *Entry) Entry {
	c := *e
	c.parent = p
	return c
}

func r2first(ctx context.Context, a *Accessor, dir *Entry) (*Entry, error) {
	r, err := a.ReadDirSorted(ctx, dir)
	if err != nil {
		return nil, err
	}
	return r.Next(ctx)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
