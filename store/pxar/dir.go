package pxar

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

const (
	tablePrefix = 31  // table items read at once for a lookup (5 tree levels)
	dirBatch    = 256 // table items read at once while listing
)

// table reads the goodbye table items of a directory: the first
// tablePrefix items at once, the others one at a time into the room left
// after them in the same buffer.
type table struct {
	a      *Accessor
	dir    *Entry
	prefix []byte // cap: one more item, for reads past the prefix
}

func (a *Accessor) newTable(dir *Entry) *table { return &table{a: a, dir: dir} }

func (t *table) item(i uint64) (goodbyeItem, error) {
	if t.prefix == nil {
		n := min(t.dir.count, tablePrefix)
		b := make([]byte, n*GoodbyeItemSize, (n+1)*GoodbyeItemSize)
		if err := t.a.meta.readAt(b, t.dir.goodbyeOfs+HeaderSize); err != nil {
			return goodbyeItem{}, err
		}
		t.prefix = b
	}
	if i < tablePrefix {
		return parseItem(t.prefix[i*GoodbyeItemSize:]), nil
	}
	b := t.prefix[len(t.prefix):cap(t.prefix)]
	if err := t.a.meta.readAt(b, t.dir.goodbyeOfs+HeaderSize+i*GoodbyeItemSize); err != nil {
		return goodbyeItem{}, err
	}
	return parseItem(b), nil
}

// checkWhole checks a table of at most tablePrefix items, all of which
// item reads at once, as loadTable checks a listed one. Lookups run it
// for every small directory on their path, so the usual case (hashes
// strictly increasing in order) is one tight loop; anything else goes to
// checkTable, which tells an unsorted table, a duplicate and a collision
// apart.
func (t *table) checkWhole() error {
	n := t.dir.count
	if n == 0 {
		return nil
	}
	if _, err := t.item(0); err != nil {
		return err
	}
	order := smallOrders[n]
	prev := le.Uint64(t.prefix[int(order[0])*GoodbyeItemSize:])
	for _, i := range order[1:] {
		h := le.Uint64(t.prefix[int(i)*GoodbyeItemSize:])
		if h <= prev {
			return t.a.checkTable(t.dir, int(n), func(i int) goodbyeItem { return parseItem(t.prefix[i*GoodbyeItemSize:]) })
		}
		prev = h
	}
	return nil
}

// smallOrders[n] is the in-order sequence of the indexes of an n-item
// table, for the tables checkWhole checks.
var smallOrders = func() (o [tablePrefix + 1][]uint8) {
	for n := 1; n <= tablePrefix; n++ {
		inOrder(n, func(i int) bool { o[n] = append(o[n], uint8(i)); return true })
	}
	return o
}()

func parseItem(b []byte) goodbyeItem {
	return goodbyeItem{hash: le.Uint64(b), offset: le.Uint64(b[8:]), size: le.Uint64(b[16:])}
}

// child decodes the entry goodbye item it of dir points to. With want
// set, it returns nil (and no error) if the entry has another name.
func (a *Accessor) child(dir *Entry, it goodbyeItem, want *string) (*Entry, error) {
	e, err := a.decodeChild(dir, it, want)
	if err != nil {
		return nil, fmt.Errorf("directory %s: %w", dir.Path(), err)
	}
	return e, nil
}

func (a *Accessor) decodeChild(dir *Entry, it goodbyeItem, want *string) (*Entry, error) {
	tableAt := dir.goodbyeOfs
	if err := checkItemOffset(dir, it); err != nil {
		return nil, err
	}
	fileOfs := dir.goodbyeOfs - it.offset
	c := newCursor(a.meta, fileOfs, dir.goodbyeOfs)
	defer c.put()
	name, err := readName(c)
	if err != nil {
		return nil, err
	}
	if want != nil && name != *want {
		return nil, nil
	}
	if HashFilename(name) != it.hash {
		return nil, corrupt(streamMeta, fileOfs, "goodbye table hash %#x does not match name %q", it.hash, name)
	}
	e := &Entry{Name: name, ID: fileOfs, parent: dir, ref: Ref{at: fileOfs, size: it.size, end: dir.goodbyeOfs, hash: it.hash}}
	h, err := c.peekHeader()
	if err != nil {
		return nil, err
	}
	if h.typ == TypeHardlink {
		if err := a.hardlink(c, e); err != nil {
			return nil, err
		}
	} else {
		entryOfs := c.pos
		if err := a.decodeBody(c, e); err != nil {
			return nil, err
		}
		if e.Kind == KindDir {
			return e, a.childDir(dir, e, it, entryOfs, c.pos)
		}
	}
	if it.size < c.pos-fileOfs {
		return nil, corrupt(streamMeta, tableAt, "goodbye item size %d of %q smaller than its entry (%d bytes)",
			it.size, name, c.pos-fileOfs)
	}
	return e, nil
}

// childDir locates the goodbye table of subdirectory e and checks that it
// points back at e's ENTRY.
func (a *Accessor) childDir(dir, e *Entry, it goodbyeItem, entryOfs, content uint64) error {
	fileOfs := e.ID
	if it.size > dir.goodbyeOfs-fileOfs {
		return corrupt(streamMeta, dir.goodbyeOfs, "directory %q of %d bytes runs past its parent's goodbye table", e.Name, it.size)
	}
	goodbyeOfs, backOfs, count, err := a.dirTail(fileOfs + it.size)
	if err != nil {
		return err
	}
	if backOfs != entryOfs || goodbyeOfs < content {
		return corrupt(streamMeta, goodbyeOfs, "goodbye table of %q points to %d, its entry is at %d", e.Name, backOfs, entryOfs)
	}
	e.dirContent, e.goodbyeOfs, e.count = content, goodbyeOfs, count
	return checkCount(e)
}

// readName consumes a FILENAME item and returns the valid name in it.
func readName(c *cursor) (string, error) {
	at := c.pos
	h, b, err := c.item()
	if err != nil {
		return "", err
	}
	if h.typ != TypeFilename {
		return "", corrupt(c.s.name, at, "expected FILENAME item, found %s", typeName(h.typ))
	}
	if len(b) == 0 || b[len(b)-1] != 0 {
		return "", corrupt(c.s.name, at, "file name not NUL-terminated")
	}
	name := string(b[:len(b)-1])
	if !ValidName(name) {
		return "", &CorruptError{Stream: c.s.name, Offset: at, Msg: fmt.Sprintf("file name %q", name), Err: ErrInvalidName}
	}
	return name, nil
}

// hardlink decodes a HARDLINK item and the regular file it points to.
func (a *Accessor) hardlink(c *cursor, e *Entry) error {
	at := c.pos
	fileOfs := e.ID
	_, b, err := c.item()
	if err != nil {
		return err
	}
	if len(b) < 8+2 || b[len(b)-1] != 0 || bytes.IndexByte(b[8:len(b)-1], 0) >= 0 {
		return corrupt(streamMeta, at, "hard link item malformed")
	}
	rel := le.Uint64(b)
	if rel == 0 || rel > fileOfs {
		return corrupt(streamMeta, at, "hard link offset %d does not point before the link at %d", rel, fileOfs)
	}
	target := fileOfs - rel
	tc := newCursor(a.meta, target, fileOfs)
	defer tc.put()
	if _, err := readName(tc); err != nil {
		return err
	}
	t := &Entry{}
	if err := a.decodeBody(tc, t); err != nil {
		return err
	}
	if t.Kind != KindFile {
		return corrupt(streamMeta, target, "hard link target is a %s, not a regular file", t.Kind)
	}
	t.Name, t.ID, t.Hardlink, t.parent, t.ref = e.Name, target, string(b[8:len(b)-1]), e.parent, e.ref
	*e = *t
	return nil
}

// DirReader lists a directory one entry at a time, in goodbye table order
// (by name hash, not by name). Its position is a stable cookie: Seek back
// to any index to resume. Its first Next reads and checks the whole
// goodbye table (24 bytes per entry), as ReadDirSorted does.
type DirReader struct {
	a     *Accessor
	dir   *Entry
	i     uint64
	items []goodbyeItem // nil until the first Next
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
	if r.items == nil {
		items, err := r.a.loadTable(ctx, r.dir)
		if err != nil {
			return nil, err
		}
		r.items = items
	}
	e, err := r.a.child(r.dir, r.items[r.i], nil)
	if err != nil {
		return nil, err
	}
	r.i++
	return e, nil
}
