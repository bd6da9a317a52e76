package snapdiff

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
)

// diffEntry is an entry of an archive made for a diff test: a file of
// size bytes and mtime secs, or (files non-nil) a directory.
type diffEntry struct {
	name       string
	size, secs int
	files      []diffEntry
}

// testArchive encodes a root directory of entries (sorted here) into a
// split archive and opens it.
func testArchive(t testing.TB, entries []diffEntry) *pxar.Accessor {
	t.Helper()
	var meta, payload bytes.Buffer
	e, err := pxar.NewEncoder(&meta, &payload, &pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFDIR | 0o755}})
	if err != nil {
		t.Fatal(err)
	}
	diffEncode(t, e, entries)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := pxar.NewAccessor(context.Background(), bytes.NewReader(meta.Bytes()), int64(meta.Len()),
		bytes.NewReader(payload.Bytes()), int64(payload.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func diffEncode(t testing.TB, e *pxar.Encoder, entries []diffEntry) {
	slices.SortFunc(entries, func(x, y diffEntry) int { return strings.Compare(x.name, y.name) })
	for _, d := range entries {
		m := &pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFREG | 0o644, Mtime: pxar.Timestamp{Secs: int64(d.secs)}}}
		if d.files != nil {
			m.Stat.Mode = pxar.ModeIFDIR | 0o755
			if err := e.CreateDirectory(d.name, m); err != nil {
				t.Fatal(err)
			}
			diffEncode(t, e, d.files)
			if err := e.FinishDirectory(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := e.AddFile(d.name, m, uint64(d.size), bytes.NewReader(make([]byte, d.size))); err != nil {
			t.Fatal(err)
		}
	}
}

// runDiff diffs two archives and returns the changes as "+ path",
// "- path" and "M path reasons".
func runDiff(t *testing.T, from, to *pxar.Accessor) []string {
	t.Helper()
	var out []string
	d := &treeDiff{ctx: context.Background(), from: from, to: to, emit: func(c Change) error {
		mark := map[string]string{"added": "+", "removed": "-", "changed": "M"}[c.Change]
		out = append(out, strings.TrimSpace(mark+" "+c.Path+" "+strings.Join(c.Reasons, ",")))
		return nil
	}}
	if err := d.run(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTreeDiffPlaces: additions, removals and changes at the start, in
// the middle and at the end of a sorted directory, and of a whole
// subdirectory, are each reported once, in path order.
func TestTreeDiffPlaces(t *testing.T) {
	base := func() []diffEntry {
		var es []diffEntry
		for i := range 100 {
			es = append(es, diffEntry{name: fmt.Sprintf("m%03d", i), size: 1, secs: 1})
		}
		return append(es, diffEntry{name: "m050d", files: []diffEntry{{name: "x", size: 1, secs: 1}}})
	}
	set := func(es []diffEntry, name string, f func(*diffEntry)) []diffEntry {
		for i := range es {
			if es[i].name == name {
				f(&es[i])
			}
		}
		return es
	}
	drop := func(es []diffEntry, name string) []diffEntry {
		return slices.DeleteFunc(es, func(d diffEntry) bool { return d.name == name })
	}
	file := func(name string) diffEntry { return diffEntry{name: name, size: 1, secs: 1} }
	cases := []struct {
		name string
		to   []diffEntry
		want []string
	}{
		{"same", base(), nil},
		{"added", append(base(), file("a"), file("m0505"), file("z")), []string{"+ /a", "+ /m0505", "+ /z"}},
		{"removed", drop(drop(drop(base(), "m000"), "m050"), "m099"), []string{"- /m000", "- /m050", "- /m099"}},
		{"changed", set(set(set(base(), "m000", func(d *diffEntry) { d.size = 2 }), "m050", func(d *diffEntry) { d.secs = 2 }),
			"m099", func(d *diffEntry) { d.size, d.secs = 3, 3 }), []string{"M /m000 size", "M /m050 mtime", "M /m099 size,mtime"}},
		{"directory removed", drop(base(), "m050d"), []string{"- /m050d/", "- /m050d/x"}},
		{"directory added", append(base(), diffEntry{name: "m0", files: []diffEntry{file("y"), file("z")}}),
			[]string{"+ /m0/", "+ /m0/y", "+ /m0/z"}},
		{"file in a directory", set(base(), "m050d", func(d *diffEntry) { d.files = []diffEntry{file("w"), {name: "x", size: 9, secs: 1}} }),
			[]string{"+ /m050d/w", "M /m050d/x size"}},
	}
	from := testArchive(t, base())
	for _, c := range cases {
		got := runDiff(t, from, testArchive(t, c.to))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		back := runDiff(t, testArchive(t, c.to), from)
		if len(back) != len(c.want) {
			t.Errorf("%s, the other way: %q", c.name, back)
		}
	}
}

// TestTreeDiffMemory diffs two directories of 200,000 entries that differ
// in one entry in the middle, and measures the heap the diff holds when
// it reports that entry: it must hold neither directory (their goodbye
// tables alone are 4.8 MB each).
func TestTreeDiffMemory(t *testing.T) {
	const n = 200_000
	const bound = 2 << 20
	entries := func(changed int) []diffEntry {
		es := make([]diffEntry, n)
		for i := range es {
			es[i] = diffEntry{name: fmt.Sprintf("f%07d", i), secs: 1}
		}
		es[n/2].size = changed
		return es
	}
	from, to := testArchive(t, entries(0)), testArchive(t, entries(1))
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	base := heap()
	var held int64
	var got []string
	d := &treeDiff{ctx: context.Background(), from: from, to: to, emit: func(c Change) error {
		held = heap() - base
		got = append(got, c.Path)
		return nil
	}}
	if err := d.run(); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("/f%07d", n/2); !slices.Equal(got, []string{want}) || held > bound {
		t.Fatalf("changes %q (want %s), %d bytes held (bound %d)", got, want, held, bound)
	}
	t.Logf("%d bytes held half-way through two directories of %d entries", held, n)
}
