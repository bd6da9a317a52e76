package pxar

import (
	"bytes"
	"context"
	"fmt"
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
// item reads at once, as a listing checks a table. Lookups run it for
// every small directory on their path, so the usual case (hashes strictly
// increasing in order) is one tight loop; anything else goes to
// checkTable, which tells an unsorted table, a duplicate and a collision
// apart.
func (t *table) checkWhole(ctx context.Context) error {
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
			_, err := t.a.checkTable(ctx, t.dir, func(i uint64) (goodbyeItem, error) {
				return parseItem(t.prefix[i*GoodbyeItemSize:]), nil
			}, t.a.itemName)
			return err
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
	e := newChild(dir, name, fileOfs, it)
	entryOfs, err := a.entryBody(c, e)
	if err != nil {
		return nil, err
	}
	if e.Kind == KindDir {
		return e, a.childDir(dir, e, it, entryOfs, c.pos)
	}
	// Another entry ends where its items end, whatever its goodbye item's
	// size says: writers differ there (pxar's add_payload_ref counts the
	// metadata alone, its create_file and cairn's Encoder the payload
	// too), and a listing in stored order never sees it.
	return e, nil
}

// newChild is the entry called name of directory dir whose FILENAME is at
// fileOfs and whose goodbye item is it, before its body is decoded.
func newChild(dir *Entry, name string, fileOfs uint64, it goodbyeItem) *Entry {
	return &Entry{Name: name, ID: fileOfs, parent: dir, ref: Ref{at: fileOfs, size: it.size, end: dir.goodbyeOfs, hash: it.hash}}
}

// entryBody decodes what follows an entry's FILENAME at c.pos into e: a
// hard link and the file it points to, or an ENTRY and its items (whose
// offset it returns, for a directory). It leaves c at the entry's end,
// or at a directory's content.
func (a *Accessor) entryBody(c *cursor, e *Entry) (entryOfs uint64, err error) {
	h, err := c.peekHeader()
	if err != nil {
		return 0, err
	}
	if h.typ == TypeHardlink {
		return 0, a.hardlink(c, e)
	}
	entryOfs = c.pos
	return entryOfs, a.decodeBody(c, e)
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
	name, err := readRawName(c)
	if err == nil && !ValidName(name) {
		return "", invalidName(c.s.name, at, name)
	}
	return name, err
}

// readRawName consumes a FILENAME item and returns the name in it, valid
// or not: the item itself is well formed.
func readRawName(c *cursor) (string, error) {
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
	return string(b[:len(b)-1]), nil
}

// invalidName is the error for the FILENAME item at offset at, whose
// name ValidName refuses.
func invalidName(stream string, at uint64, name string) error {
	return &CorruptError{Stream: stream, Offset: at, Msg: fmt.Sprintf("file name %q", name), Err: ErrInvalidName}
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
