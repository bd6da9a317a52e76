package pbscheck

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// chunkPath is where a chunk lives in a store (PBS's chunk_store.rs).
func chunkPath(store string, digest [32]byte) string {
	h := hex.EncodeToString(digest[:])
	return filepath.Join(store, ".chunks", h[:4], h)
}

// indexStream reads an index's data front to back, loading and checking
// one chunk at a time (plain or zstd chunks only).
type indexStream struct {
	store string
	x     *Index
	next  int
	buf   []byte
}

// OpenStream returns a reader of the data of a dynamic or fixed index
// of a plain snapshot: each chunk is loaded from store when reached and
// checked (CRC, length, SHA-256). It reads forward only.
func OpenStream(store string, x *Index) io.Reader {
	return &indexStream{store: store, x: x}
}

func (s *indexStream) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.next >= len(s.x.Chunks) {
			return 0, io.EOF
		}
		c := s.x.Chunks[s.next]
		b, err := os.ReadFile(chunkPath(s.store, c.Digest))
		if err != nil {
			return 0, fmt.Errorf("%s chunk %d (%x): %w", filepath.Base(s.x.Path), s.next, c.Digest, err)
		}
		data, err := decodeChunk(b, c.Digest, c.End-c.Start)
		if err != nil {
			return 0, fmt.Errorf("%s chunk %d (%x): %w", filepath.Base(s.x.Path), s.next, c.Digest, err)
		}
		s.buf = data
		s.next++
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// posReader reads a stream forward only and knows its position.
type posReader struct {
	name string
	r    *bufio.Reader
	pos  uint64
}

func newPosReader(name string, r io.Reader) *posReader {
	return &posReader{name: name, r: bufio.NewReaderSize(r, 64<<10)}
}

// full reads exactly len(p) bytes; an early end is an error naming the
// stream and the offset.
func (r *posReader) full(p []byte) error {
	n, err := io.ReadFull(r.r, p)
	r.pos += uint64(n)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s stream ends at offset %d, inside an item", r.name, r.pos)
	}
	return err
}

func (r *posReader) bytes(n uint64) ([]byte, error) {
	b := make([]byte, n)
	return b, r.full(b)
}

// skip reads and drops n bytes.
func (r *posReader) skip(n uint64) error {
	m, err := io.CopyN(io.Discard, r.r, int64(n))
	r.pos += uint64(m)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s stream ends at offset %d, %d bytes short of %d", r.name, r.pos, n-uint64(m), r.pos+n-uint64(m))
	}
	return err
}

// rest reads to the end and returns the number of bytes read and the
// last up to 16 of them.
func (r *posReader) rest() (uint64, []byte, error) {
	var n uint64
	var last []byte
	buf := make([]byte, 64<<10)
	for {
		m, err := r.r.Read(buf)
		n += uint64(m)
		r.pos += uint64(m)
		if m >= 16 {
			last = append(last[:0], buf[m-16:m]...)
		} else if m > 0 {
			last = append(last, buf[:m]...)
			last = last[max(0, len(last)-16):]
		}
		if err == io.EOF {
			return n, last, nil
		}
		if err != nil {
			return n, last, err
		}
	}
}
