package chunkcache

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store/index"
)

// DefaultReadahead is how many chunks a sequential reader loads ahead.
const DefaultReadahead = 4

// Reader is an io.ReaderAt over an index's data through a Cache. It
// holds no lock around I/O: concurrent ReadAt calls are served in
// parallel. A reader whose reads follow each other has the next chunks
// loaded and decoded in the background before they are asked for.
type Reader struct {
	idx       index.Index
	key       *crypt.Key // IndexKey(idx): an encrypted archive's
	c         *Cache
	readahead int
	bg        context.Context

	hint    atomic.Int64 // chunk of the last read
	nextOff atomic.Int64 // offset just after the last read
	ahead   atomic.Int64 // highest chunk index prefetched
	slots   chan struct{}
	// recent holds the chunks (not zero chunks) this reader loaded or
	// prefetched last, in the order they came (readahead.go). The shared
	// cache may refuse to keep a newcomer while a sequential read streams
	// through more data than it holds (its admission favours chunks read
	// often); recent makes sure a prefetched chunk is not loaded again
	// when it is asked for, and spares the cache a lookup per request
	// within one chunk.
	recent []atomic.Pointer[recentChunk]
	// loading holds the digests this reader is loading through the
	// cache, each with a channel closed once it is among the recent ones
	// (or failed): other reads of it wait for that (readahead.go).
	lmu     sync.Mutex
	loading map[chunk.Digest]chan struct{}
	loaded  func(i int) // a test's: called when a load of chunk i returns

	scanLimited bool // LimitScans
}

type recentChunk struct {
	i int
	d chunk.Digest
	b *chunkBuf // with the slot's reference
}

// holds reports whether the recent chunk is chunk i of the index, or
// has its digest d and size: an incremental file archive's payload index
// lists a chunk again wherever a run of files after a changed one reuses
// it ([C][new][C]…), and a sequential read of it comes back to C one or
// two chunks later, which the shared cache may have refused to keep. (A
// hostile index may give one digest two sizes: the cache refuses the
// other size, so must this.)
func (rc *recentChunk) holds(i int, d chunk.Digest, size int) bool {
	return rc.i == i || (rc.d == d && len(rc.b.data) == size)
}

var _ io.ReaderAt = (*Reader)(nil)

// NewReader returns a reader of idx through c that prefetches
// readahead chunks (0: none). Prefetching stops when bg ends. The chunks
// of an encrypted snapshot's index (store.OpenSnapshotIndex) are decrypted
// with its key (IndexKey).
func NewReader(bg context.Context, idx index.Index, c *Cache, readahead int) *Reader {
	r := &Reader{idx: idx, key: IndexKey(idx), c: c, readahead: readahead, bg: bg,
		loading: make(map[chunk.Digest]chan struct{})}
	r.ahead.Store(-1)
	r.nextOff.Store(-1)
	if readahead > 0 {
		r.slots = make(chan struct{}, readahead)
	}
	r.recent = make([]atomic.Pointer[recentChunk], max(readahead, 0)+2)
	return r
}

// LimitScans makes the chunks the reader loads for sequential reads
// take at most the cache's scan share (scanShare); call it before the
// first read. Images read through the mount do: their sequential reads
// (a copy, a dd) seldom come back to a chunk, their random reads (a VM,
// a loop mount) do. File archives do not: their files share chunks, one
// file's read comes back to the chunk the last one ended in.
func (r *Reader) LimitScans() { r.scanLimited = true }

// Size returns the data size.
func (r *Reader) Size() int64 { return r.idx.Size() }

// Index returns the underlying index.
func (r *Reader) Index() index.Index { return r.idx }

// ReadAt implements io.ReaderAt.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	return r.ReadAtContext(r.bg, p, off)
}

// ReadAtContext is ReadAt with a context for the loads it waits on.
func (r *Reader) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	size := r.idx.Size()
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", r.idx.Path(), off)
	}
	if off >= size {
		return 0, io.EOF
	}
	sequential := r.sequential(off, len(p))
	stream := len(p) >= streamRead
	n := 0
	i := int(r.hint.Load())
	for n < len(p) && off < size {
		i = r.idx.Find(off, i)
		d, start, end, err := r.entry(i, off)
		if err != nil {
			return n, err
		}
		if sequential || n > 0 {
			r.prefetch(i, stream)
		}
		b, err := r.chunk(ctx, i, d, int(end-start), stream && (sequential || n > 0))
		if err != nil {
			return n, &ReadError{Path: r.idx.Path(), Offset: off, Digest: d.String(), Err: err}
		}
		// The chunk holds end-start bytes (the cache checks) and off is
		// inside it (entry checks): every pass copies at least a byte.
		m := copy(p[n:], b.data[off-start:])
		b.release()
		n += m
		off += int64(m)
	}
	r.hint.Store(int64(i))
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// entry returns index entry i, which must hold offset off: an index that
// failed (index.ErrFault) or an entry that does not hold off is an error
// naming the index file, never an empty chunk to loop on.
func (r *Reader) entry(i int, off int64) (d chunk.Digest, start, end int64, err error) {
	d, start, end = r.idx.Chunk(i)
	if err := r.idx.Err(); err != nil {
		return d, start, end, &ReadError{Path: r.idx.Path(), Offset: off, Err: err}
	}
	if off < start || off >= end {
		return d, start, end, &ReadError{Path: r.idx.Path(), Offset: off, Digest: d.String(),
			Err: fmt.Errorf("%w: entry %d covers [%d, %d), not offset %d", index.ErrFormat, i, start, end, off)}
	}
	return d, start, end, nil
}

// ReadError is a failed read of an archive: where, which chunk, why.
type ReadError struct {
	Path   string // index file
	Offset int64
	Digest string
	Err    error
}

func (e *ReadError) Error() string {
	if e.Digest == "" {
		return fmt.Sprintf("%s: read at offset %d: %v", e.Path, e.Offset, e.Err)
	}
	if strings.Contains(e.Err.Error(), e.Digest) {
		return fmt.Sprintf("%s: read at offset %d: %v", e.Path, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: read at offset %d: chunk %s: %v", e.Path, e.Offset, e.Digest, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// WriteTo writes the whole archive to w, chunk by chunk, without copying
// through an intermediate buffer, prefetching ahead as it goes.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for i := 0; i < r.idx.Len(); i++ {
		d, start, end := r.idx.Chunk(i)
		if err := r.idx.Err(); err != nil {
			return n, &ReadError{Path: r.idx.Path(), Offset: n, Err: err}
		}
		r.prefetch(i, true)
		b, err := r.chunk(r.bg, i, d, int(end-start), true)
		if err != nil {
			return n, &ReadError{Path: r.idx.Path(), Offset: start, Digest: d.String(), Err: err}
		}
		m, err := w.Write(b.data)
		b.release()
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
