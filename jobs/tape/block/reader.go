package block

import (
	"errors"
	"fmt"
	"io"
)

// Source yields the blocks of one tape file.
type Source interface {
	// ReadBlock reads the next block into b (len Size). It returns io.EOF
	// at the file mark and an error matching ErrTruncated when the media
	// ends inside a block. After the end-of-stream block it is called once
	// with a short buffer to probe for the file mark; any data there is an
	// error.
	ReadBlock(b []byte) error
}

// Reader is the byte stream of one tape file. It checks every block's
// magic, sequence number and size, and that the file ends with an
// end-of-stream block followed by the file mark.
type Reader struct {
	src        Source
	name       string
	buf        []byte
	hdr        Header
	off        int    // read offset in the current payload
	next       uint32 // expected sequence number of the next block
	ended      bool   // end-of-stream block seen
	incomplete bool
	err        error
	probe      [512]byte // for the file mark after the end-of-stream block
}

var _ io.Reader = (*Reader)(nil)

// NewReader reads the first block of a tape file. name (e.g. "tape T1
// file 3") prefixes every error. A file without blocks fails with
// ErrEmptyFile.
func NewReader(src Source, name string) (*Reader, error) {
	r := &Reader{src: src, name: name, buf: make([]byte, Size)}
	if err := src.ReadBlock(r.buf); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %w", name, ErrEmptyFile)
		}
		return nil, fmt.Errorf("%s block 0: %w", name, err)
	}
	if err := r.accept(); err != nil {
		return nil, err
	}
	return r, nil
}

// accept checks the block in buf.
func (r *Reader) accept() error {
	h, err := ParseHeader(r.buf)
	if err != nil {
		return fmt.Errorf("%s block %d: %w", r.name, r.next, err)
	}
	if h.Seq != r.next {
		return fmt.Errorf("%s block %d: %w: sequence number %d", r.name, r.next, ErrCorrupt, h.Seq)
	}
	r.hdr, r.off = h, 0
	r.next++
	if h.EndOfStream() {
		r.ended, r.incomplete = true, h.Incomplete()
		err := r.src.ReadBlock(r.probe[:])
		switch {
		case errors.Is(err, io.EOF):
		case err == nil:
			return fmt.Errorf("%s block %d: %w: data after the end-of-stream block", r.name, r.next, ErrCorrupt)
		default:
			return fmt.Errorf("%s block %d: %w", r.name, r.next, err)
		}
	}
	return nil
}

// Read reads the stream's payload bytes; io.EOF after the end-of-stream
// block.
func (r *Reader) Read(p []byte) (int, error) {
	for r.off >= r.hdr.Size {
		if r.err != nil {
			return 0, r.err
		}
		if r.ended {
			return 0, io.EOF
		}
		r.err = r.readBlock()
	}
	n := copy(p, r.buf[HeaderSize+r.off:HeaderSize+r.hdr.Size])
	r.off += n
	return n, nil
}

func (r *Reader) readBlock() error {
	err := r.src.ReadBlock(r.buf)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w: file ends after block %d without an end-of-stream block",
			r.name, ErrTruncated, r.next-1)
	}
	if err != nil {
		return fmt.Errorf("%s block %d: %w", r.name, r.next, err)
	}
	return r.accept()
}

// Name returns the name given to NewReader.
func (r *Reader) Name() string { return r.name }

// Blocks returns the number of blocks read so far.
func (r *Reader) Blocks() int { return int(r.next) }

// Ended reports whether the end-of-stream block was read.
func (r *Reader) Ended() bool { return r.ended }

// Incomplete reports whether the end-of-stream block marks the stream
// incomplete (the writer reached the end of the media). Valid once Ended.
func (r *Reader) Incomplete() bool { return r.incomplete }

// SkipToEnd reads and discards the rest of the stream and returns how
// many payload bytes it skipped.
func (r *Reader) SkipToEnd() (int64, error) {
	var n int64
	for {
		n += int64(r.hdr.Size - r.off)
		r.off = r.hdr.Size
		if r.ended {
			return n, nil
		}
		if r.err != nil {
			return n, r.err
		}
		r.err = r.readBlock()
	}
}

// StreamSource reads blocks from a byte stream that holds whole blocks
// back to back, such as a virtual tape file; the end of the stream is the
// file mark.
func StreamSource(r io.Reader) Source { return streamSource{r} }

type streamSource struct{ r io.Reader }

func (s streamSource) ReadBlock(b []byte) error {
	n, err := io.ReadFull(s.r, b)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		return io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: media ends %d bytes into a %d-byte block", ErrTruncated, n, len(b))
	}
	return err
}
