package pxar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// listSorted lists dir in stored order to its end and returns the
// number of entries and the error that ended it (nil at io.EOF).
func listSorted(a *Accessor, dir *Entry) (int, error) {
	ctx := context.Background()
	r, err := a.ReadDirSorted(ctx, dir)
	if err != nil {
		return 0, err
	}
	for n := 0; ; n++ {
		if _, err := r.Next(ctx); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return n, err
		}
	}
}

// TestListingTableMismatch: a directory whose goodbye table does not list
// exactly the entries stored in it (one missing, one more, an item moved
// onto another entry, into an entry or out of the directory, a
// subdirectory's size wrong) fails its listing with a corruption error
// naming the directory, whether the stored-order listing decodes the
// content or the table-order listing decodes what the items point at.
func TestListingTableMismatch(t *testing.T) {
	entries := files("a", "b", "c", "d", "e")
	entries = append(entries, craft{name: "sub", dir: files("x", "y")})
	for i := range 40 {
		entries = append(entries, craft{name: fmt.Sprintf("z%02d", i), data: "z"})
	}
	at := func(items []goodbyeItem, name string) int {
		for i, it := range items {
			if it.hash == HashFilename(name) {
				return i
			}
		}
		panic(name)
	}
	cases := []struct {
		name, want string
		root       func([]goodbyeItem) []goodbyeItem
	}{
		{"item missing", "more entries than", func(it []goodbyeItem) []goodbyeItem { return append(it[:2], it[3:]...) }},
		{"item twice", "more than once", func(it []goodbyeItem) []goodbyeItem { return append(it, it[1]) }},
		{"item on another entry", "not those its goodbye table lists", func(it []goodbyeItem) []goodbyeItem {
			it[at(it, "b")].offset = it[at(it, "c")].offset
			return it
		}},
		{"item inside an entry", "not those its goodbye table lists", func(it []goodbyeItem) []goodbyeItem {
			it[at(it, "b")].offset += HeaderSize
			return it
		}},
		{"item inside a subdirectory", "not those its goodbye table lists", func(it []goodbyeItem) []goodbyeItem {
			it[at(it, "b")].offset = it[at(it, "sub")].offset + 100
			return it
		}},
		{"item before the directory", "outside its directory", func(it []goodbyeItem) []goodbyeItem {
			it[at(it, "b")].offset = 1
			return it
		}},
		{"subdirectory too large", "runs past its parent's goodbye table", func(it []goodbyeItem) []goodbyeItem {
			it[at(it, "sub")].size += 1 << 20
			return it
		}},
		{"subdirectory too small", "goodbye", func(it []goodbyeItem) []goodbyeItem {
			it[at(it, "sub")].size -= GoodbyeItemSize
			return it
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := openCrafted(t, craftArchive(entries, craftOpts{root: c.root}))
			n, err := listSorted(a, a.Root())
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("stored order: %d entries, %v, want %q", n, err, c.want)
			}
			if n > len(entries) {
				t.Fatalf("stored order listed %d entries of %d", n, len(entries))
			}
			if err := listDir(a, a.Root()); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("listings: %v", err)
			}
		})
	}
	a := openCrafted(t, craftArchive(entries, craftOpts{}))
	if n, err := listSorted(a, a.Root()); err != nil || n != len(entries) {
		t.Fatalf("unchanged table: %d entries, %v", n, err)
	}
}

// TestTableRuns checks the runs of equal hashes of a table the way
// lookups check small tables (names compared, hashes not): a name twice
// in a run is a duplicate even when another name of that hash is between
// them, and a run longer than maxHashRun is refused; lookups of the
// run's hash, which read the small table whole, agree.
func TestTableRuns(t *testing.T) {
	h := HashFilename("a")
	run := func(names ...string) []craft {
		var out []craft
		for _, n := range names {
			out = append(out, craft{name: n, data: "x", hash: h})
		}
		return append(out, files("zz")...)
	}
	long := make([]string, maxHashRun+1)
	for i := range long {
		long[i] = fmt.Sprintf("n%02d", i)
	}
	for _, c := range []struct {
		entries []craft
		want    string
	}{
		{run("a", "b", "c"), ""},
		{run("a", "b", "a"), `holds "a" more than once`},
		{run("b", "a", "c", "a"), `holds "a" more than once`},
		{run(long[:maxHashRun]...), ""},
		{run(long...), fmt.Sprintf("more than %d entries of hash", maxHashRun)},
	} {
		a := openCrafted(t, craftArchive(c.entries, craftOpts{}))
		w := &levelWindows{a: a, dir: a.Root()}
		_, err := a.checkTable(context.Background(), a.Root(), w.item, a.itemName)
		if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%d entries: %v, want %q", len(c.entries), err, c.want)
		}
		// A listing also checks that each name has its item's hash.
		if _, err := listSorted(a, a.Root()); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%d entries listed: %v", len(c.entries), err)
		}
		// A lookup checks the small table whole first, then finds "a"
		// among the run of its hash; the others' names hash elsewhere.
		name := c.entries[0].name
		e, err := a.Lookup(context.Background(), a.Root(), name)
		switch {
		case c.want != "":
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%d entries, lookup of %s: %v, want %q", len(c.entries), name, err, c.want)
			}
		case name == "a" && (err != nil || e.Name != "a"), name != "a" && !errors.Is(err, ErrNotFound):
			t.Errorf("%d entries, lookup of %s: %v", len(c.entries), name, err)
		}
	}
}
