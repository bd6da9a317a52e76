package pxar

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
)

// scanAhead is how much of a directory's content a SortedDirReader reads
// at once: a few dozen small entries.
const scanAhead = 4 << 10

// ErrPosition is a position given to SortedDirReader.Seek that is not
// one of the directory's.
var ErrPosition = errors.New("pxar: not the position of an entry of the directory")

// SortedDirReader lists a directory in the order its entries are stored,
// which for archives written by Encoder (and by PBS) is byte-wise name
// order. It decodes the entries front to back from the directory's
// content, one per Next, and looks up only a subdirectory's goodbye item
// (to step over its content): its memory does not grow with the
// directory. Its first Next (or Seek) checks the whole goodbye table,
// reading it level by level; a listing from the start ends (the Next that
// returns io.EOF) by checking that the entries it decoded are exactly
// those the table lists, so names are unique and every one can be looked
// up. An entry that does not decode is an error, and the next call goes
// on after it (see Next); an error that ends the listing (Err) is
// returned again by every later call.
type SortedDirReader struct {
	a       *Accessor
	dir     *Entry
	tab     *table  // dir's goodbye table, for subdirectories' items
	c       *cursor // reads the entries; nil before the first and at the end
	pos     uint64  // the next entry's FILENAME; dir.goodbyeOfs after the last
	n       uint64  // entries read from the start (whole)
	sum     uint64  // their shares (tableSum)
	want    uint64  // the table's sum
	whole   bool    // read from the start: the end compares n and sum
	checked bool
	skips   int   // broken entries stepped over through the table
	err     error // what ended the listing
}

// ReadDirSorted starts listing directory dir in stored order.
func (a *Accessor) ReadDirSorted(ctx context.Context, dir *Entry) (*SortedDirReader, error) {
	if dir.Kind != KindDir {
		return nil, fmt.Errorf("%w: %q", ErrNotDir, dir.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &SortedDirReader{a: a, dir: dir, tab: a.newTable(dir), pos: dir.dirContent, whole: true}, nil
}

// Len is the number of entries of the directory.
func (r *SortedDirReader) Len() int { return int(r.dir.count) }

// Pos is the position of the entry Next returns next (its offset in the
// archive), or of the directory's end: a cookie for Seek, also for
// another reader of the same directory. Positions increase in stored
// order.
func (r *SortedDirReader) Pos() uint64 { return r.pos }

// Seek moves to position pos, which Pos returned for this directory; any
// other (one the goodbye table lists no entry at) fails with ErrPosition.
// A listing resumed elsewhere than at the start does not compare its
// entries with the table at its end.
func (r *SortedDirReader) Seek(ctx context.Context, pos uint64) error {
	if err := r.check(ctx); err != nil {
		return err
	}
	d := r.dir
	if pos == r.pos {
		return nil
	}
	if pos != d.goodbyeOfs && pos != d.dirContent {
		if pos < d.dirContent || pos > d.goodbyeOfs {
			return fmt.Errorf("directory %s: %w: %d outside [%d, %d]", d.Path(), ErrPosition, pos, d.dirContent, d.goodbyeOfs)
		}
		name, err := r.a.rawItemName(d, goodbyeItem{offset: d.goodbyeOfs - pos})
		ok := false
		if err == nil {
			_, ok, err = r.tab.find(HashFilename(name), d.goodbyeOfs-pos)
		}
		if err != nil {
			return fmt.Errorf("directory %s: %w: %d: %w", d.Path(), ErrPosition, pos, err)
		}
		if !ok {
			return fmt.Errorf("directory %s: %w: %d", d.Path(), ErrPosition, pos)
		}
	}
	r.pos, r.whole, r.n, r.sum = pos, pos == d.dirContent, 0, 0
	return nil
}

// check checks the goodbye table once. A failure ends the listing,
// unless ctx's: a later call checks again.
func (r *SortedDirReader) check(ctx context.Context) error {
	if r.err != nil || r.checked {
		return r.err
	}
	want, err := r.a.checkDir(ctx, r.dir)
	if err != nil {
		if ctx.Err() == nil {
			r.err = err
		}
		return err
	}
	r.want, r.checked = want, true
	return nil
}

// Err is the error that ended the listing, which every later call
// returns, or nil while Next can go on (after an error too).
func (r *SortedDirReader) Err() error { return r.err }

// Next returns the next entry, or io.EOF after the last. An entry that
// does not decode is an error (naming the directory), and the next call
// goes on after it: an entry whose only fault is its name (ErrInvalidName)
// is stepped over as a good one; another (a corrupt item) to the next
// position the goodbye table lists, for at most maxSkips entries. Past
// those, and after an error of the table, of the end's check or of a
// read, the listing has ended: Err returns that error.
func (r *SortedDirReader) Next(ctx context.Context) (*Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	d := r.dir
	switch {
	case r.pos >= d.goodbyeOfs:
		r.c = nil
		if r.whole {
			r.err = r.end()
		}
		return nil, cmp.Or(r.err, io.EOF)
	case r.whole && r.n >= d.count:
		return nil, r.stop(fmt.Errorf("directory %s: %w", d.Path(),
			corrupt(streamMeta, r.pos, "more entries than the %d its goodbye table lists", d.count)))
	}
	at := r.pos
	e, err := r.scan()
	if err == nil {
		return e, nil
	}
	err = fmt.Errorf("directory %s: %w", d.Path(), err)
	if r.pos == at { // scan moves only past an entry it decoded whole
		return nil, r.skip(ctx, err)
	}
	return nil, err
}

// stop ends the listing with err.
func (r *SortedDirReader) stop(err error) error {
	r.err, r.c = err, nil
	return err
}

// end checks a whole listing against the goodbye table.
func (r *SortedDirReader) end() error {
	d := r.dir
	switch {
	case r.n != d.count:
		return corrupt(streamMeta, d.goodbyeOfs, "directory %s holds %d entries, its goodbye table lists %d", d.Path(), r.n, d.count)
	case r.sum != r.want:
		return corrupt(streamMeta, d.goodbyeOfs, "the entries of directory %s are not those its goodbye table lists", d.Path())
	}
	return nil
}

// scan decodes the entry at r.pos and moves past it. An entry with an
// invalid name is decoded as any other, moved past and returned as an
// error.
func (r *SortedDirReader) scan() (*Entry, error) {
	d := r.dir
	if r.c == nil {
		r.c = &cursor{s: r.a.meta, limit: d.goodbyeOfs, ahead: scanAhead, buf: make([]byte, 0, scanAhead)}
	}
	c, fileOfs := r.c, r.pos
	c.pos = fileOfs
	name, err := readRawName(c)
	if err != nil {
		return nil, err
	}
	it := goodbyeItem{hash: HashFilename(name), offset: d.goodbyeOfs - fileOfs}
	e := newChild(d, name, fileOfs, it)
	entryOfs, err := r.a.entryBody(c, e)
	if err != nil {
		return nil, err
	}
	end := c.pos
	if e.Kind == KindDir {
		// Its content ends where its goodbye item says.
		var ok bool
		if it, ok, err = r.tab.find(it.hash, it.offset); err != nil || !ok {
			return nil, cmp.Or(err, corrupt(streamMeta, fileOfs, "subdirectory %q has no goodbye item", name))
		}
		if err := r.a.childDir(d, e, it, entryOfs, c.pos); err != nil {
			return nil, err
		}
		end = fileOfs + it.size
	}
	e.ref.size = end - fileOfs
	r.pos, r.n, r.sum = end, r.n+1, r.sum+tableSum(it.hash, it.offset)
	if !ValidName(name) {
		return nil, invalidName(streamMeta, fileOfs, name)
	}
	return e, nil
}

// maxSkips bounds the broken entries one listing steps over: each costs
// a read of the whole goodbye table, so a directory crafted with many
// costs at most maxSkips such reads.
const maxSkips = 16

// skip steps over the broken entry at r.pos, whose error is err, to the
// next position the goodbye table lists after it, counting the item that
// lists it as the entry's (for the end's check), and returns err. When
// the table lists no entry there or cannot be read, or after maxSkips
// entries, err ends the listing.
func (r *SortedDirReader) skip(ctx context.Context, err error) error {
	if !errors.Is(err, ErrCorrupt) {
		return r.stop(err)
	}
	if r.skips >= maxSkips {
		return r.stop(fmt.Errorf("%w (more than %d entries do not decode: the rest is left out)", err, maxSkips))
	}
	it, next, listed, terr := r.nextListed(ctx, r.pos)
	switch {
	case terr != nil && ctx.Err() != nil:
		return terr
	case terr != nil:
		return r.stop(fmt.Errorf("%w (and the listing cannot go on: %w)", err, terr))
	case !listed:
		return r.stop(err)
	}
	r.skips++
	r.pos, r.n, r.sum = next, r.n+1, r.sum+tableSum(it.hash, it.offset)
	return err
}

// nextListed reads the goodbye table, a page at a time, for the item of
// the entry at position at (listed: there is one) and the smallest
// position of an entry after it (the directory's end if none).
func (r *SortedDirReader) nextListed(ctx context.Context, at uint64) (it goodbyeItem, next uint64, listed bool, err error) {
	d := r.dir
	next = d.goodbyeOfs
	page := make([]byte, min(dirBatch, d.count)*GoodbyeItemSize)
	for i := uint64(0); i < d.count; i += dirBatch {
		if err := ctx.Err(); err != nil {
			return it, 0, false, err
		}
		b := page[:min(dirBatch, d.count-i)*GoodbyeItemSize]
		if err := r.a.meta.readAt(b, d.goodbyeOfs+HeaderSize+i*GoodbyeItemSize); err != nil {
			return it, 0, false, fmt.Errorf("directory %s: %w", d.Path(), err)
		}
		for ; len(b) > 0; b = b[GoodbyeItemSize:] {
			x := parseItem(b)
			if checkItemOffset(d, x) != nil {
				continue // the table's check refused it already
			}
			switch p := d.goodbyeOfs - x.offset; {
			case p == at && !listed:
				it, listed = x, true
			case p > at && p < next:
				next = p
			}
		}
	}
	return it, next, listed, nil
}
