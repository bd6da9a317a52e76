package pxar

import (
	"context"
	"fmt"
	"io"
)

// DirReader lists a directory one entry at a time, in goodbye table order
// (by name hash, not by name). Its position is a stable cookie: Seek back
// to any index to resume. Its first Next checks the whole goodbye table
// (reading it level by level, as ReadDirSorted does); then it reads the
// table a page of dirBatch items at a time: its memory does not grow
// with the directory.
type DirReader struct {
	a       *Accessor
	dir     *Entry
	i       uint64
	checked bool
	page    []byte // items from, from+1, … as stored
	from    uint64
}

// ReadDir starts listing directory dir.
func (a *Accessor) ReadDir(dir *Entry) (*DirReader, error) {
	if dir.Kind != KindDir {
		return nil, fmt.Errorf("%w: %q", ErrNotDir, dir.Name)
	}
	return &DirReader{a: a, dir: dir}, nil
}

// Len is the number of entries of the directory.
func (r *DirReader) Len() int { return int(r.dir.count) }

// Pos is the index of the entry Next returns next.
func (r *DirReader) Pos() int { return int(r.i) }

// Seek moves to entry index i (0 ≤ i ≤ Len).
func (r *DirReader) Seek(i int) { r.i = uint64(max(0, min(i, r.Len()))) }

// Next returns the next entry, or io.EOF after the last.
func (r *DirReader) Next(ctx context.Context) (*Entry, error) {
	if r.i >= r.dir.count {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !r.checked {
		if _, err := r.a.checkDir(ctx, r.dir); err != nil {
			return nil, err
		}
		r.checked = true
	}
	it, err := r.item(r.i)
	if err != nil {
		return nil, err
	}
	e, err := r.a.child(r.dir, it, nil)
	if err != nil {
		return nil, err
	}
	r.i++
	return e, nil
}

// item returns table item i from the page, reading the page that starts
// at i when it is not there.
func (r *DirReader) item(i uint64) (goodbyeItem, error) {
	if i < r.from || i-r.from >= uint64(len(r.page))/GoodbyeItemSize {
		n := min(dirBatch, r.dir.count-i)
		if r.page == nil {
			r.page = make([]byte, 0, min(dirBatch, r.dir.count)*GoodbyeItemSize)
		}
		r.page = r.page[:n*GoodbyeItemSize]
		if err := r.a.meta.readAt(r.page, r.dir.goodbyeOfs+HeaderSize+i*GoodbyeItemSize); err != nil {
			r.page = r.page[:0]
			return goodbyeItem{}, fmt.Errorf("directory %s: %w", r.dir.Path(), err)
		}
		r.from = i
	}
	return parseItem(r.page[(i-r.from)*GoodbyeItemSize:]), nil
}
