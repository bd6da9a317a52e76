package pxar_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/store/pxar"
)

// A crafted archive whose goodbye tables list each directory from every
// directory above it: followed, 40 levels are 2^38 entries. The listing
// of a directory decodes its content front to back, where only the real
// subdirectory is, so the first directory whose table lists another ends
// the walk (its entries are not those of its table); a Walker would also
// refuse a second listing of a directory (ErrSharedDir).
func TestWalkerSharedDirs(t *testing.T) {
	const n = 40
	meta, payload := hostile.Encode(hostile.SharedDirs(n))
	acc, err := pxar.NewAccessor(t.Context(), bytes.NewReader(meta), int64(len(meta)), bytes.NewReader(payload), int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	w := acc.Walk(acc.Root())
	entries := 0
	hostile.InTime(t, "walk shared directories", func() {
		for {
			_, _, err = w.Next(t.Context())
			if err != nil {
				return
			}
			entries++
		}
	})
	shared := errors.Is(err, pxar.ErrSharedDir) || errors.Is(err, pxar.ErrCorrupt) && strings.Contains(err.Error(), "its goodbye table lists")
	if !shared || errors.Is(err, io.EOF) || entries > 2*n {
		t.Fatalf("after %d entries: %v, want %v or a listing that does not match its table", entries, err, pxar.ErrSharedDir)
	}
}

// An entry with an invalid name (each class the decoder refuses) is an
// error of the Walker naming its directory, and the walk goes on with
// the entries after it; a directory with an invalid name is left out
// with everything below it. A name longer than a FILENAME item may be
// makes its directory's entry unreadable: that directory is left out.
func TestWalkerGoesOnAfterInvalidNames(t *testing.T) {
	long := string(bytes.Repeat([]byte("n"), pxar.MaxFilenameLen+1))
	classes := []string{"", ".", "..", "a/b", "../x", "a\x00b"}
	for i, bad := range append(classes, long) {
		badDir := classes[(i+1)%len(classes)] // another name: equal names would fail the whole table
		root := hostile.Dir("", hostile.File("a", "1"), hostile.Dir("d", hostile.File(bad, "2"), hostile.File("e", "3"),
			hostile.Dir(badDir, hostile.File("below", "4")), hostile.File("f", "5")), hostile.File("z", "6"))
		want, wantErrs, in := []string{"", "a", "d", "d/e", "d/f", "z"}, 2, "in directory d: "
		if bad == long {
			want, wantErrs, in = []string{"", "a", "z"}, 1, "in directory .: "
		}
		paths, errs := walkAll(t, root)
		if !slices.Equal(paths, want) || len(errs) != wantErrs {
			t.Fatalf("name %.20q: paths %q, want %q; errors %v", bad, paths, want, errs)
		}
		for _, err := range errs {
			if !strings.Contains(err.Error(), in) || bad != long && !errors.Is(err, pxar.ErrInvalidName) {
				t.Errorf("name %.20q: %v, want %v %s", bad, err, pxar.ErrInvalidName, in)
			}
		}
	}
}

// walkAll walks an encoded tree to its end, going on after errors.
func walkAll(t *testing.T, root *hostile.Node) (paths []string, errs []error) {
	meta, payload := hostile.Encode(root)
	acc, err := pxar.NewAccessor(t.Context(), bytes.NewReader(meta), int64(len(meta)), bytes.NewReader(payload), int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	w := acc.Walk(acc.Root())
	for {
		p, _, err := w.Next(t.Context())
		if errors.Is(err, io.EOF) {
			return paths, errs
		}
		if err != nil {
			if errs = append(errs, err); len(errs) > 20 {
				t.Fatalf("the walk does not go on after an error: %v", err)
			}
			continue
		}
		paths = append(paths, p)
	}
}

// A directory whose listing cannot go on (its goodbye table lists a name
// twice) is an error of the Walker naming it, and the walk goes on after
// it in its parent.
func TestWalkerLeavesStuckDirectory(t *testing.T) {
	root := hostile.Dir("", hostile.File("a", "1"), hostile.Dir("d", hostile.File("x", "2"), hostile.File("x", "3")),
		hostile.Dir("e", hostile.File("y", "4")))
	paths, errs := walkAll(t, root)
	if want := []string{"", "a", "d", "e", "e/y"}; !slices.Equal(paths, want) || len(errs) != 1 {
		t.Fatalf("paths %q, want %q; errors %v", paths, want, errs)
	}
	if !errors.Is(errs[0], pxar.ErrDuplicate) || !strings.Contains(errs[0].Error(), "in directory d: ") {
		t.Errorf("%v, want %v in directory d", errs[0], pxar.ErrDuplicate)
	}
}
