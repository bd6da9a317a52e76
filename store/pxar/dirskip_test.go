package pxar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// sortedEvents calls r.Next up to limit times, until io.EOF or an error
// that ends the listing, and says what each gave: a name, "!" and the
// error's class (invalid: ErrInvalidName, corrupt: another ErrCorrupt),
// "!!" when it ended the listing (Err), or "EOF".
func sortedEvents(t *testing.T, r *SortedDirReader, limit int) []string {
	t.Helper()
	var ev []string
	for range limit {
		e, err := r.Next(context.Background())
		switch {
		case errors.Is(err, io.EOF):
			return append(ev, "EOF")
		case err == nil:
			ev = append(ev, e.Name)
			continue
		case errors.Is(err, ErrInvalidName):
			ev = append(ev, "!invalid")
		case errors.Is(err, ErrCorrupt):
			ev = append(ev, "!corrupt")
		default:
			t.Fatalf("after %q: %v", ev, err)
		}
		if !strings.Contains(err.Error(), "directory /") {
			t.Errorf("%v does not name its directory", err)
		}
		if r.Err() != nil {
			if !errors.Is(r.Err(), err) {
				t.Errorf("Err %v, Next %v", r.Err(), err)
			}
			ev[len(ev)-1] = "!" + ev[len(ev)-1]
			if _, again := r.Next(context.Background()); again != r.Err() {
				t.Errorf("after the end: %v, want %v", again, r.Err())
			}
			return ev
		}
	}
	return ev
}

// A listing goes on after an entry with an invalid name (a file, a
// directory: stepped over whole) and after one that does not decode (a
// FILENAME item too large: to the next entry its table lists), and still
// checks at its end that it went over the entries its table lists. A
// listing resumes at an invalid entry's position.
func TestSortedGoesOnAfterBadEntries(t *testing.T) {
	long := strings.Repeat("n", MaxFilenameLen+1)
	entries := []craft{{name: "a", data: "1"}, {name: long, data: "2"}, {name: "", data: "3"},
		{name: "b", data: "4"}, {name: "..", dir: files("below")}, {name: "c", data: "5"}}
	a := openCrafted(t, craftArchive(entries, craftOpts{}))
	ctx := context.Background()
	r, err := a.ReadDirSorted(ctx, a.Root())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "!corrupt", "!invalid", "b", "!invalid", "c", "EOF"}
	if got := sortedEvents(t, r, 20); !slices.Equal(got, want) {
		t.Fatalf("listing: %q, want %q", got, want)
	}
	// The position of "" (after the long name's) lists "" again.
	r, _ = a.ReadDirSorted(ctx, a.Root())
	r.Next(ctx)
	r.Next(ctx)
	at := r.Pos()
	if err := r.Seek(ctx, a.Root().dirContent); err != nil {
		t.Fatal(err)
	}
	if err := r.Seek(ctx, at); err != nil {
		t.Fatalf("seek to an invalid name's entry: %v", err)
	}
	if got := sortedEvents(t, r, 20); !slices.Equal(got, want[2:]) {
		t.Fatalf("listing resumed: %q, want %q", got, want[2:])
	}
}

// Entries that do not decode cost a read of the goodbye table each: a
// listing steps over maxSkips of them and then ends, whatever the size
// of the directory.
func TestSortedSkipsBounded(t *testing.T) {
	entries := files("a")
	for i := range 3 * maxSkips {
		entries = append(entries, craft{name: fmt.Sprintf("%s%03d", strings.Repeat("n", MaxFilenameLen), i), data: "x"})
	}
	entries = append(entries, files("z")...)
	a := openCrafted(t, craftArchive(entries, craftOpts{}))
	r, err := a.ReadDirSorted(context.Background(), a.Root())
	if err != nil {
		t.Fatal(err)
	}
	got := sortedEvents(t, r, 100)
	want := []string{"a"}
	for range maxSkips {
		want = append(want, "!corrupt")
	}
	if want = append(want, "!!corrupt"); !slices.Equal(got, want) || !strings.Contains(r.Err().Error(), "do not decode") {
		t.Fatalf("listing: %q, want %q; %v", got, want, r.Err())
	}
}

// A broken entry that its table does not list (the entry before it ends
// where no entry is listed) ends the listing: it is not skipped.
func TestSortedUnlistedBrokenEnds(t *testing.T) {
	long := strings.Repeat("n", MaxFilenameLen+1)
	entries := []craft{{name: "a", data: "1"}, {name: long, data: "2"}, {name: "b", data: "3"}}
	a := openCrafted(t, craftArchive(entries, craftOpts{root: func(it []goodbyeItem) []goodbyeItem {
		it[1].offset++ // the long name's item points inside it
		return it
	}}))
	r, err := a.ReadDirSorted(context.Background(), a.Root())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sortedEvents(t, r, 20), []string{"a", "!!corrupt"}; !slices.Equal(got, want) {
		t.Fatalf("listing: %q, want %q", got, want)
	}
}
