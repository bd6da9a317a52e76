package pxar

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// SortedDirReader lists a directory in the order its entries are stored,
// which for archives written by Encoder (and by PBS) is byte-wise name
// order. It holds the directory's goodbye table (24 bytes per entry) and
// decodes one entry per Next, so memory does not grow with entry size.
type SortedDirReader struct {
	a     *Accessor
	dir   *Entry
	items []goodbyeItem // sorted by offset in the stream
	i     int
}

// ReadDirSorted starts listing directory dir in stored order.
func (a *Accessor) ReadDirSorted(ctx context.Context, dir *Entry) (*SortedDirReader, error) {
	if dir.Kind != KindDir {
		return nil, fmt.Errorf("%w: %q", ErrNotDir, dir.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	items, err := a.loadTable(ctx, dir)
	if err != nil {
		return nil, err
	}
	r := &SortedDirReader{a: a, dir: dir, items: items}
	// A larger offset back from the goodbye table is an earlier entry.
	slices.SortFunc(r.items, func(x, y goodbyeItem) int {
		switch {
		case x.offset > y.offset:
			return -1
		case x.offset < y.offset:
			return 1
		}
		return 0
	})
	return r, nil
}

// Len is the number of entries of the directory.
func (r *SortedDirReader) Len() int { return len(r.items) }

// Next returns the next entry, or io.EOF after the last. An entry that
// cannot be decoded (an invalid name, a corrupt item) is an error, and
// the next call returns the entry after it: a caller may report it and
// go on.
func (r *SortedDirReader) Next(ctx context.Context) (*Entry, error) {
	if r.i >= len(r.items) {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := r.a.child(r.dir, r.items[r.i], nil)
	r.i++ // an entry that does not decode is left out: the next call goes on after it
	if err != nil {
		return nil, err
	}
	return e, nil
}
