package chunk

import (
	"errors"
	"io"
)

// DefaultBufferSize is how much a Reader asks of its source per read.
// Large reads matter: a chunker fed 8 KiB at a time spends its time in
// system calls.
const DefaultBufferSize = 4 << 20

// Reader cuts a stream into chunks with a Chunker, reading the source in
// large blocks.
type Reader struct {
	src   io.Reader
	c     Chunker
	buf   []byte
	start int // first byte of the current chunk in buf
	scan  int // first byte not yet given to the chunker
	end   int // end of valid data in buf
	err   error
}

// NewReader returns a Reader that reads src bufSize bytes at a time
// (DefaultBufferSize when bufSize <= 0).
func NewReader(src io.Reader, c Chunker, bufSize int) *Reader {
	if bufSize <= 0 {
		bufSize = DefaultBufferSize
	}
	return &Reader{src: src, c: c, buf: make([]byte, bufSize)}
}

// Next appends the next chunk to dst[:0] and returns it. At the end of the
// stream it returns io.EOF with an empty slice; a short last chunk is
// returned before that.
func (r *Reader) Next(dst []byte) ([]byte, error) {
	dst = dst[:0]
	for {
		if r.scan < r.end {
			n := r.c.Scan(r.buf[r.scan:r.end])
			if n > 0 {
				r.scan += n
				dst = append(dst, r.buf[r.start:r.scan]...)
				r.start = r.scan
				return dst, nil
			}
			r.scan = r.end
		}
		if r.err != nil {
			dst = append(dst, r.buf[r.start:r.end]...)
			r.start, r.scan, r.end = 0, 0, 0
			if len(dst) > 0 {
				r.c.Reset()
				return dst, nil
			}
			return dst, r.err
		}
		// Move the partial chunk out of the way, then refill.
		if r.start == r.end {
			r.start, r.scan, r.end = 0, 0, 0
		} else if r.end == len(r.buf) {
			dst = append(dst, r.buf[r.start:r.end]...)
			r.start, r.scan, r.end = 0, 0, 0
		}
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				r.err = io.EOF
			} else {
				r.err = err
				return dst, err
			}
		}
	}
}

// Each calls fn with every chunk in turn and its offset in the stream,
// reusing one buffer (fn must not keep data), and returns the bytes and
// chunks seen. It stops at the end of the stream, a read error or fn's
// first error.
func (r *Reader) Each(fn func(off int64, data []byte) error) (total, count int64, err error) {
	var buf []byte
	for {
		buf, err = r.Next(buf)
		if errors.Is(err, io.EOF) {
			return total, count, nil
		}
		if err != nil {
			return total, count, err
		}
		if err := fn(total, buf); err != nil {
			return total, count, err
		}
		total += int64(len(buf))
		count++
	}
}
