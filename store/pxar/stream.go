package pxar

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

const (
	streamMeta    = "metadata"
	streamPayload = "payload"
	readAhead     = 512 // first read of an entry: name, ENTRY and a few items
)

// stream is one archive stream of known size; no read leaves it.
type stream struct {
	r    io.ReaderAt
	size uint64
	name string
}

// readAt fills p from off, failing with a corruption error if that range
// is outside the stream.
func (s *stream) readAt(p []byte, off uint64) error {
	if off > s.size || uint64(len(p)) > s.size-off {
		return corrupt(s.name, off, "%d bytes needed, stream ends at %d", len(p), s.size)
	}
	n, err := s.r.ReadAt(p, int64(off))
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("pxar: reading %s stream at %d: %w", s.name, off, err)
}

// cursor reads items one after another in [pos, limit) of a stream,
// buffering what it read.
type cursor struct {
	s      *stream
	pos    uint64
	limit  uint64
	buf    []byte
	bufOfs uint64
	ahead  uint64          // bytes read at once: readAhead, more for a scan
	small  [readAhead]byte // buf's first storage: most entries fit
}

// cursors recycles cursors: a listing or lookup decodes one entry per
// cursor, and decoded entries copy what they keep out of its buffer.
var cursors = sync.Pool{New: func() any { return new(cursor) }}

// newCursor returns a cursor from the pool; release it with put.
func newCursor(s *stream, pos, limit uint64) *cursor {
	c := cursors.Get().(*cursor)
	c.s, c.pos, c.limit, c.bufOfs, c.ahead = s, pos, min(limit, s.size), 0, readAhead
	c.buf = c.small[:0]
	return c
}

// put returns c to the pool; c must not be used after.
func (c *cursor) put() {
	c.s = nil
	cursors.Put(c)
}

// peek returns the n bytes at pos without consuming them. The slice is
// valid until the next call.
func (c *cursor) peek(n uint64) ([]byte, error) {
	if c.pos > c.limit || n > c.limit-c.pos {
		return nil, corrupt(c.s.name, c.pos, "item of %d bytes runs past the end of its region at %d", n, c.limit)
	}
	if c.pos >= c.bufOfs && c.pos+n <= c.bufOfs+uint64(len(c.buf)) {
		o := c.pos - c.bufOfs
		return c.buf[o : o+n], nil
	}
	want := min(max(n, c.ahead), c.limit-c.pos)
	if uint64(cap(c.buf)) < want {
		c.buf = make([]byte, want)
	}
	c.buf = c.buf[:want]
	if err := c.s.readAt(c.buf, c.pos); err != nil {
		c.buf = c.buf[:0]
		return nil, err
	}
	c.bufOfs = c.pos
	return c.buf[:n], nil
}

// next returns the n bytes at pos and consumes them.
func (c *cursor) next(n uint64) ([]byte, error) {
	b, err := c.peek(n)
	if err == nil {
		c.pos += n
	}
	return b, err
}

// skip consumes n bytes without reading them.
func (c *cursor) skip(n uint64) error {
	if c.pos > c.limit || n > c.limit-c.pos {
		return corrupt(c.s.name, c.pos, "item of %d bytes runs past the end of its region at %d", n, c.limit)
	}
	c.pos += n
	return nil
}

// peekHeader returns the valid header at pos without consuming it.
func (c *cursor) peekHeader() (header, error) {
	b, err := c.peek(HeaderSize)
	if err != nil {
		return header{}, err
	}
	h := parseHeader(b)
	return h, checkHeader(c.s.name, c.pos, h)
}

// item consumes the header at pos and returns it and its content.
func (c *cursor) item() (header, []byte, error) {
	h, err := c.peekHeader()
	if err != nil {
		return h, nil, err
	}
	start := c.pos
	if h.contentSize() > c.limit-c.pos-HeaderSize {
		return h, nil, corrupt(c.s.name, start, "%s item of %d bytes runs past the end of its region at %d",
			typeName(h.typ), h.fullSize, c.limit)
	}
	b, err := c.next(h.fullSize)
	if err != nil {
		return h, nil, err
	}
	return h, b[HeaderSize:], nil
}

// fixedItem consumes an item whose content must be exactly size bytes.
func (c *cursor) fixedItem(size uint64) (header, []byte, error) {
	start := c.pos
	h, b, err := c.item()
	if err == nil && uint64(len(b)) != size {
		err = corrupt(c.s.name, start, "%s item has %d content bytes, want %d", typeName(h.typ), len(b), size)
	}
	return h, b, err
}
