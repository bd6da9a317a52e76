package pxar

import (
	"context"
	"fmt"
	"io"
	"strings"
)

const formatVersion2 = 2

// Accessor reads a pxar archive at random. It is safe for concurrent use
// if its io.ReaderAt inputs are.
type Accessor struct {
	meta    *stream
	payload *stream // nil: single stream, or split without its payload
	version int
	prelude []byte
	root    *Entry
}

// NewAccessor opens an archive: meta is its metadata stream (the whole
// archive for a single-stream archive) of metaSize bytes; payload is the
// payload stream of a split archive, or nil. A split archive opened
// without its payload lists and stats entries, but Open fails for files.
func NewAccessor(ctx context.Context, meta io.ReaderAt, metaSize int64, payload io.ReaderAt, payloadSize int64) (*Accessor, error) {
	if metaSize < 0 || payloadSize < 0 {
		return nil, fmt.Errorf("%w: negative stream size", ErrInvalid)
	}
	a := &Accessor{meta: &stream{r: meta, size: uint64(metaSize), name: streamMeta}, version: 1}
	if payload != nil {
		a.payload = &stream{r: payload, size: uint64(payloadSize), name: streamPayload}
		var b [HeaderSize]byte
		if err := a.payload.readAt(b[:], 0); err != nil {
			return nil, err
		}
		if h := parseHeader(b[:]); h.typ != TypePayloadStartMarker || h.fullSize != HeaderSize {
			return nil, corrupt(streamPayload, 0, "no payload start marker (found %s of %d bytes)", typeName(h.typ), h.fullSize)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	root, err := a.openRoot()
	if err != nil {
		return nil, err
	}
	if a.payload != nil && a.version != formatVersion2 {
		return nil, corrupt(streamMeta, 0, "payload stream given for a format version %d archive", a.version)
	}
	a.root = root
	return a, nil
}

// Version is the archive's format version: 2 for split archives, else 1.
func (a *Accessor) Version() int { return a.version }

// Prelude is the data of the archive's PRELUDE item, or nil.
func (a *Accessor) Prelude() []byte { return a.prelude }

// Root is the archive's root directory.
func (a *Accessor) Root() *Entry { return a.root }

// openRoot decodes the root directory, which ends the metadata stream.
func (a *Accessor) openRoot() (*Entry, error) {
	goodbyeOfs, entryOfs, count, err := a.dirTail(a.meta.size)
	if err != nil {
		return nil, err
	}
	if entryOfs != 0 {
		// pxar's root goodbye tail points at the start of the archive; a
		// subdirectory's points after its FILENAME: this is a cut archive.
		return nil, corrupt(streamMeta, a.meta.size-GoodbyeItemSize, "last goodbye table points to %d, not to the archive start", entryOfs)
	}
	c := newCursor(a.meta, entryOfs, goodbyeOfs)
	if err := a.skipPreamble(c); err != nil {
		return nil, err
	}
	e := &Entry{}
	if err := a.decodeBody(c, e); err != nil {
		return nil, err
	}
	if e.Kind != KindDir {
		return nil, corrupt(streamMeta, entryOfs, "root entry is a %s, not a directory", e.Kind)
	}
	e.dirContent, e.goodbyeOfs, e.count = c.pos, goodbyeOfs, count
	return e, checkCount(e)
}

// skipPreamble consumes FORMAT_VERSION and PRELUDE items at the start of
// the archive.
func (a *Accessor) skipPreamble(c *cursor) error {
	if c.pos != 0 {
		return nil
	}
	h, err := c.peekHeader()
	if err != nil || h.typ != TypeFormatVersion {
		return err
	}
	_, b, err := c.fixedItem(8)
	if err != nil {
		return err
	}
	switch v := le.Uint64(b); v {
	case 1, formatVersion2:
		a.version = int(v)
	default:
		return corrupt(streamMeta, 0, "unknown format version %d", v)
	}
	h, err = c.peekHeader()
	if err != nil || h.typ != TypePrelude {
		return err
	}
	at := c.pos
	_, b, err = c.item()
	if err != nil {
		return err
	}
	if uint64(len(b)) > maxEntryMeta {
		return corrupt(streamMeta, at, "prelude of %d bytes too large", len(b))
	}
	a.prelude = append([]byte{}, b...)
	return nil
}

// dirTail reads the goodbye table of the directory that ends at end: its
// GOODBYE item's offset, the directory's ENTRY offset and the number of
// table items.
func (a *Accessor) dirTail(end uint64) (goodbyeOfs, entryOfs, count uint64, err error) {
	const minSize = HeaderSize + GoodbyeItemSize
	if end < minSize {
		return 0, 0, 0, corrupt(streamMeta, end, "directory too short for a goodbye table")
	}
	var b [GoodbyeItemSize]byte
	tailOfs := end - GoodbyeItemSize
	if err := a.meta.readAt(b[:], tailOfs); err != nil {
		return 0, 0, 0, err
	}
	hash, rel, size := le.Uint64(b[:]), le.Uint64(b[8:]), le.Uint64(b[16:])
	switch {
	case hash != GoodbyeTailMarker:
		return 0, 0, 0, corrupt(streamMeta, tailOfs, "no goodbye tail marker")
	case size < minSize || size > end || (size-HeaderSize)%GoodbyeItemSize != 0:
		return 0, 0, 0, corrupt(streamMeta, tailOfs, "goodbye table size %d invalid", size)
	}
	goodbyeOfs = end - size
	if rel > goodbyeOfs {
		return 0, 0, 0, corrupt(streamMeta, tailOfs, "goodbye tail offset %d before the stream start", rel)
	}
	if err := a.meta.readAt(b[:HeaderSize], goodbyeOfs); err != nil {
		return 0, 0, 0, err
	}
	if h := parseHeader(b[:HeaderSize]); h.typ != TypeGoodbye || h.fullSize != size {
		return 0, 0, 0, corrupt(streamMeta, goodbyeOfs, "expected GOODBYE item of %d bytes, found %s of %d", size, typeName(h.typ), h.fullSize)
	}
	return goodbyeOfs, goodbyeOfs - rel, (size-HeaderSize)/GoodbyeItemSize - 1, nil
}

// Lookup finds name in directory dir through its goodbye table, reading
// only the table items on the search path, the in-order neighbours of the
// item that matches and the matching entries. It checks what it reads as
// a listing checks the whole table: the items on its path must be sorted,
// and no second entry of that name may be among the items of equal hash
// (the match's in-order neighbours in a sorted table). A table of up to
// tablePrefix items, read whole anyway, is checked whole.
func (a *Accessor) Lookup(ctx context.Context, dir *Entry, name string) (*Entry, error) {
	if dir.Kind != KindDir {
		return nil, fmt.Errorf("%w: %q", ErrNotDir, dir.Name)
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := a.newTable(dir)
	if dir.count <= tablePrefix {
		if err := t.checkWhole(ctx); err != nil {
			return nil, err
		}
	}
	i, err := t.descend(HashFilename(name))
	if err != nil || i >= dir.count {
		if err == nil {
			err = fmt.Errorf("%w: %q", ErrNotFound, name)
		}
		return nil, err
	}
	found, err := t.equalRun(i, &name)
	if err == nil && found == nil {
		err = fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	return found, err
}

// LookupPath resolves a slash-separated path from the root, without
// following symlinks. Empty and "." components are skipped; ".." is
// refused.
func (a *Accessor) LookupPath(ctx context.Context, path string) (*Entry, error) {
	e := a.root
	for comp := range strings.SplitSeq(path, "/") {
		if comp == "" || comp == "." {
			continue
		}
		if comp == ".." {
			return nil, fmt.Errorf("%w: \"..\" in path %q", ErrInvalidName, path)
		}
		next, err := a.Lookup(ctx, e, comp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		e = next
	}
	return e, nil
}

// Open returns the content of a regular file: a section of the payload
// stream (split archives) or of the metadata stream.
func (a *Accessor) Open(ctx context.Context, e *Entry) (*io.SectionReader, error) {
	if e.Kind != KindFile {
		return nil, fmt.Errorf("%w: %q is a %s", ErrNotFile, e.Name, e.Kind)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !e.payloadRef {
		return io.NewSectionReader(a.meta.r, int64(e.contentOfs), int64(e.Size)), nil
	}
	if a.payload == nil {
		return nil, fmt.Errorf("%w: opening %q", ErrNoPayload, e.Name)
	}
	var b [HeaderSize]byte
	if err := a.payload.readAt(b[:], e.contentOfs); err != nil {
		return nil, err
	}
	if h := parseHeader(b[:]); h.typ != TypePayload || h.fullSize != HeaderSize+e.Size {
		return nil, corrupt(streamPayload, e.contentOfs, "expected PAYLOAD item of %d bytes for %q, found %s of %d",
			HeaderSize+e.Size, e.Name, typeName(h.typ), h.fullSize)
	}
	return io.NewSectionReader(a.payload.r, int64(e.contentOfs+HeaderSize), int64(e.Size)), nil
}
