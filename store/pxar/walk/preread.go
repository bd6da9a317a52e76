package walk

import (
	"errors"
	"io"
	"math/bits"
	"sync"

	"golang.org/x/sys/unix"
)

// maxPreread is the largest file whose content the helper reads for the
// walk (most files of a source tree are smaller); larger ones the walk
// reads itself, after the helper's WILLNEED.
const maxPreread = 128 << 10

// prereadClasses are the buffer sizes, powers of two from 4 KiB to
// maxPreread; a buffer goes back to its class's pool once the walk has
// stored the file.
var prereadClasses [6]sync.Pool

func prereadClass(n int64) int {
	return max(bits.Len64(uint64(n-1))-12, 0) // 4 KiB: 0, … 128 KiB: 5
}

// preread reads the content of a regular file of size bytes (0 < size <=
// maxPreread) with pread into a pooled buffer. It returns nil when a
// read fails or finds the file shorter than size (the walk then reads
// it itself, and meets the error or the end as it would have).
func preread(fd int, size int64) []byte {
	c := prereadClass(size)
	p, _ := prereadClasses[c].Get().(*[]byte)
	if p == nil {
		b := make([]byte, 4<<10<<c)
		p = &b
	}
	buf := (*p)[:size]
	for done := 0; done < len(buf); {
		n, err := unix.Pread(fd, buf[done:], int64(done))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			prereadClasses[c].Put(p)
			return nil
		}
		done += n
	}
	return buf
}

// releasePreread gives a buffer of preread back to its pool.
func releasePreread(b []byte) {
	if cap(b) >= 4<<10 && cap(b) <= maxPreread && cap(b)&(cap(b)-1) == 0 {
		b = b[:cap(b)]
		prereadClasses[prereadClass(int64(cap(b)))].Put(&b)
	}
}

// prereadReader is the Content of a file whose first bytes the helper
// read (data, from offset 0): Read and ReadAt take what data holds from
// memory and the rest, if the file grew, from the descriptor, so the
// walk makes no system call for a file read whole ahead.
type prereadReader struct {
	fdReader
	data []byte
	pos  int64
}

func (r *prereadReader) Read(p []byte) (int, error) {
	if r.pos < int64(len(r.data)) {
		n := copy(p, r.data[r.pos:])
		r.pos += int64(n)
		return n, nil
	}
	n, err := r.fdReader.ReadAt(p, r.pos)
	r.pos += int64(n)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

func (r *prereadReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("walk: negative offset")
	}
	n := 0
	if off < int64(len(r.data)) {
		n = copy(p, r.data[off:])
	}
	if n == len(p) {
		return n, nil
	}
	k, err := r.fdReader.ReadAt(p[n:], off+int64(n))
	return n + k, err
}
