package pxar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestListingMemory lists a directory of 200,000 entries in stored order,
// in table order and with a Walker, and measures the heap each listing
// holds half-way: a listing that kept the directory's goodbye table (24
// bytes an entry, 4.8 MB) or its entries would hold more than the bound.
func TestListingMemory(t *testing.T) {
	const n = 200_000
	const bound = 1 << 20 // 5 bytes an entry
	meta, payload := bigDir(t, n)
	a := openArchive(t, meta, payload)
	ctx := context.Background()
	listers := map[string]func() func() (*Entry, error){
		"sorted": func() func() (*Entry, error) {
			r, err := a.ReadDirSorted(ctx, a.Root())
			if err != nil {
				t.Fatal(err)
			}
			return func() (*Entry, error) { return r.Next(ctx) }
		},
		"table order": func() func() (*Entry, error) {
			r, err := a.ReadDir(a.Root())
			if err != nil {
				t.Fatal(err)
			}
			return func() (*Entry, error) { return r.Next(ctx) }
		},
		"walker": func() func() (*Entry, error) {
			w := a.Walk(a.Root())
			w.Next(ctx) // the root
			return func() (*Entry, error) { _, e, err := w.Next(ctx); return e, err }
		},
	}
	for name, start := range listers {
		base := liveHeap()
		next := start()
		var held int64
		count := 0
		for {
			_, err := next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if count++; count == n/2 {
				held = liveHeap() - base
			}
		}
		runtime.KeepAlive(next)
		if count != n || held > bound {
			t.Errorf("%s: %d entries, %d bytes held half-way (bound %d)", name, count, held, bound)
		}
		t.Logf("%s: %d bytes held half-way through %d entries", name, held, n)
	}
}

// positions lists dir in stored order and returns the names and the
// position after each entry (pos[0] is the start).
func positions(t *testing.T, a *Accessor, dir *Entry) (names []string, pos []uint64) {
	t.Helper()
	ctx := context.Background()
	r, err := a.ReadDirSorted(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	pos = append(pos, r.Pos())
	for {
		e, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return names, pos
		}
		if err != nil {
			t.Fatal(err)
		}
		names, pos = append(names, e.Name), append(pos, r.Pos())
	}
}

// TestSortedSeek resumes a stored-order listing at every position a
// listing gave (a fresh reader each time, and one reader moved back and
// forth) and refuses every other position: inside an entry, the entries
// of a subdirectory, outside the directory.
func TestSortedSeek(t *testing.T) {
	tree := richTree()
	for i := range 300 {
		tree.children = append(tree.children, fileNode(fmt.Sprintf("zz%04d", i), []byte("x")))
	}
	meta, payload := encodeTree(t, tree, true)
	a := openArchive(t, meta, payload)
	ctx := context.Background()
	names, pos := positions(t, a, a.Root())
	moved, err := a.ReadDirSorted(ctx, a.Root())
	if err != nil {
		t.Fatal(err)
	}
	for k := len(pos) - 1; k >= 0; k -= 7 {
		for _, r := range []*SortedDirReader{nil, moved} {
			if r == nil {
				r, _ = a.ReadDirSorted(ctx, a.Root())
			}
			if err := r.Seek(ctx, pos[k]); err != nil {
				t.Fatalf("seek to entry %d: %v", k, err)
			}
			var rest []string
			for e, err := r.Next(ctx); !errors.Is(err, io.EOF); e, err = r.Next(ctx) {
				if err != nil {
					t.Fatalf("after seeking to entry %d: %v", k, err)
				}
				rest = append(rest, e.Name)
			}
			if !slices.Equal(rest, names[k:]) {
				t.Fatalf("after seeking to entry %d: %q, want %q", k, rest, names[k:])
			}
		}
	}
	var sub *Entry
	for _, c := range tree.children {
		if c.kind == KindDir && len(c.children) > 0 {
			if sub, err = a.Lookup(ctx, a.Root(), c.name); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	_, inner := positions(t, a, sub)
	bad := []uint64{0, 1, pos[1] + 1, pos[len(pos)-1] + 1, pos[len(pos)-1] + 1<<40, inner[0], inner[1]}
	for _, p := range bad {
		if slices.Contains(pos, p) {
			continue
		}
		if err := moved.Seek(ctx, p); !errors.Is(err, ErrPosition) {
			t.Errorf("seek to %d (positions %d…%d): %v, want ErrPosition", p, pos[0], pos[len(pos)-1], err)
		}
	}
}

// TestNameClasses looks up and lists names of every kind among 500
// others (so that lookups search the table beyond its first levels):
// lengths around SipHash's 8-byte blocks, the longest name, control
// characters, bytes above 0x7f, names that sort first and last; each is
// found, listed in byte order, and reloaded from the listing's Ref.
func TestNameClasses(t *testing.T) {
	classes := []string{"a", "\x01", "\xff", "-", "...", ".hidden", " ", "a b", "new\nline", "back\\slash",
		"1234567", "12345678", "123456789", "123456789012345", "1234567890123456", "12345678901234567",
		"ünïcødé", "\x80\xfe", strings.Repeat("L", 255), strings.Repeat("M", MaxFilenameLen)}
	tree := dirNode("")
	for _, n := range classes {
		tree.children = append(tree.children, fileNode(n, []byte(n[:1])))
	}
	for i := range 500 {
		tree.children = append(tree.children, fileNode(fmt.Sprintf("filler%03d", i), []byte("f")))
	}
	slices.SortFunc(tree.children, func(x, y *node) int { return strings.Compare(x.name, y.name) })
	meta, payload := encodeTree(t, tree, true)
	a := openArchive(t, meta, payload)
	ctx := context.Background()
	r, err := a.ReadDirSorted(ctx, a.Root())
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for e, err := r.Next(ctx); !errors.Is(err, io.EOF); e, err = r.Next(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, e.Name)
		found, err := a.Lookup(ctx, a.Root(), e.Name)
		if err != nil || found.ID != e.ID || found.Size != e.Size {
			t.Fatalf("lookup %q: %+v %v, listed %+v", e.Name, found, err, e)
		}
		again, err := a.Reload(ctx, e.Ref())
		if err != nil || again.Name != e.Name || again.ID != e.ID {
			t.Fatalf("reload %q: %+v %v", e.Name, again, err)
		}
	}
	if len(listed) != len(tree.children) || !slices.IsSorted(listed) {
		t.Fatalf("listed %d names (sorted %v), want %d", len(listed), slices.IsSorted(listed), len(tree.children))
	}
	for _, n := range classes {
		for _, absent := range []string{n + "x", n[:len(n)-1] + "\x02"} {
			if ValidName(absent) && !slices.Contains(classes, absent) {
				if _, err := a.Lookup(ctx, a.Root(), absent); !errors.Is(err, ErrNotFound) {
					t.Errorf("lookup of absent %.40q: %.200v", absent, err)
				}
			}
		}
	}
}
