package filearchive

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
)

// pinnedReader is an io.ReaderAt over an index through the cache that
// keeps the chunk of its last read at hand. A backup reads the previous
// metadata stream forward in small pieces, nearly all within one chunk:
// they are served by a copy, without a cache lookup.
type pinnedReader struct {
	ctx context.Context
	idx index.Index
	c   *chunkcache.Cache

	mu         sync.Mutex
	start, end int64
	data       []byte
	hint       int
}

var _ io.ReaderAt = (*pinnedReader)(nil)

func (r *pinnedReader) ReadAt(p []byte, off int64) (int, error) {
	size := r.idx.Size()
	if off < 0 || off >= size {
		return 0, io.EOF
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(p) && off < size {
		if off < r.start || off >= r.end || r.data == nil {
			r.hint = r.idx.Find(off, r.hint)
			d, start, end := r.idx.Chunk(r.hint)
			if err := r.idx.Err(); err != nil {
				return n, &chunkcache.ReadError{Path: r.idx.Path(), Offset: off, Err: err}
			}
			data, err := r.c.GetKey(r.ctx, chunkcache.IndexKey(r.idx), d, int(end-start))
			if err != nil {
				r.data = nil
				return n, &chunkcache.ReadError{Path: r.idx.Path(), Offset: off, Digest: d.String(), Err: err}
			}
			if int64(len(data)) != end-start {
				return n, fmt.Errorf("%s: chunk %s holds %d bytes, index says %d", r.idx.Path(), d, len(data), end-start)
			}
			r.start, r.end, r.data = start, end, data
		}
		m := copy(p[n:], r.data[off-r.start:])
		n += m
		off += int64(m)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
