package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/dgraph-io/ristretto/v2"
	"golang.org/x/sync/singleflight"
)

// CacheStats counts cache activity; read with Load.
type CacheStats struct {
	Hits, Misses  atomic.Int64
	LoadedBytes   atomic.Int64 // blob bytes read from the store
	DecodedBytes  atomic.Int64 // plain bytes produced by loads
	ZeroHits      atomic.Int64 // zero chunks served without I/O
	Errors        atomic.Int64
	Collapsed     atomic.Int64 // misses that joined a load in flight
	PrefetchLoads atomic.Int64
}

// Cache is a byte-bounded cache of decoded, digest-checked chunks shared by
// every reader of a store. Concurrent misses of one digest are collapsed
// into one load. Returned slices are shared: callers must not modify them.
type Cache struct {
	src   ChunkReader
	rc    *ristretto.Cache[string, []byte]
	sf    singleflight.Group
	Stats CacheStats
	zeros sync.Map // size → *zeroChunk

	mu     sync.RWMutex // held shared by loads, exclusively by Close
	closed bool
}

// ErrCacheClosed is returned by Get after Close.
var ErrCacheClosed = errors.New("chunk cache closed")

// ErrSizeMismatch is returned when a good chunk's size differs from what the
// index entry asking for it says: the index is wrong, not the chunk.
var ErrSizeMismatch = errors.New("chunk size differs from the index")

// errLoadPanic is returned to every waiter of a load that panicked.
var errLoadPanic = errors.New("chunk load failed")

type zeroChunk struct {
	d    chunk.Digest
	data []byte
}

// DefaultCacheSize is the default bound of a Cache.
const DefaultCacheSize = 256 << 20

// NewCache returns a cache of src's chunks bounded to maxBytes of
// decoded data.
func NewCache(src ChunkReader, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheSize
	}
	counters := max(maxBytes/(64<<10)*10, 10000)
	rc, err := ristretto.NewCache(&ristretto.Config[string, []byte]{
		NumCounters: counters, MaxCost: maxBytes, BufferItems: 64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, fmt.Errorf("chunk cache: %w", err)
	}
	return &Cache{src: src, rc: rc}, nil
}

// Close waits for loads in flight (prefetches among them) and releases
// the cache; later Gets fail with ErrCacheClosed.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		c.rc.Close()
	}
}

// zero returns the zero chunk of a size that fixed indexes use (a power
// of two of at least 4 KiB), nil for other sizes: dynamic chunks have
// sizes of every kind, and keeping a zero buffer and digest for each
// would cost as much as the data read.
func (c *Cache) zero(size int) *zeroChunk {
	if size < 4096 || size&(size-1) != 0 {
		return nil
	}
	if z, ok := c.zeros.Load(size); ok {
		return z.(*zeroChunk)
	}
	z := &zeroChunk{d: chunk.ZeroDigest(size), data: make([]byte, size)}
	c.zeros.Store(size, z)
	return z
}

// IsZeroChunk reports whether d is the digest of size zero bytes.
func (c *Cache) IsZeroChunk(d chunk.Digest, size int) bool {
	z := c.zero(size)
	return z != nil && z.d == d
}

// Get returns chunk d's plain data of the given size, loading, decoding
// and checking it on a miss. A load started here is not cancelled when
// ctx ends (others may be waiting on it); the wait is. Whether it comes
// from the cache, a load of its own or one it joined, a chunk whose size
// is not size fails with ErrSizeMismatch (an index may list one chunk with
// two sizes; the chunk itself stays cached, it is good).
func (c *Cache) Get(ctx context.Context, d chunk.Digest, size int) ([]byte, error) {
	if z := c.zero(size); z != nil && z.d == d {
		c.Stats.ZeroHits.Add(1)
		return z.data, nil
	}
	return c.get(ctx, nil, d, size)
}

// get is Get and GetKey past the zero chunk. A chunk read with a key is
// cached under the key's fingerprint and its digest, a plain one under
// its digest: what was checked under one key is never served to a
// reader of another, nor to a plain reader.
func (c *Cache) get(ctx context.Context, key *crypt.Key, d chunk.Digest, size int) ([]byte, error) {
	ck := cacheKey(key, d)
	if b, ok := c.rc.Get(ck); ok {
		c.Stats.Hits.Add(1)
		return checkSize(d, b, size)
	}
	c.Stats.Misses.Add(1)
	ch := c.sf.DoChan(ck, func() (any, error) {
		return c.load(context.WithoutCancel(ctx), key, d, ck)
	})
	select {
	case r := <-ch:
		if r.Shared {
			c.Stats.Collapsed.Add(1)
		}
		if r.Err != nil {
			return nil, r.Err
		}
		return checkSize(d, r.Val.([]byte), size)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// cacheKey is the cache's key of chunk d read with key (nil: plain).
func cacheKey(key *crypt.Key, d chunk.Digest) string {
	if key == nil {
		return string(d[:])
	}
	fp := key.Fingerprint()
	return string(fp[:]) + string(d[:])
}

// checkSize returns data if it holds size bytes, else an ErrSizeMismatch.
func checkSize(d chunk.Digest, data []byte, size int) ([]byte, error) {
	if len(data) != size {
		return nil, fmt.Errorf("chunk %s: %w: the chunk holds %d bytes, the index entry says %d", d, ErrSizeMismatch, len(data), size)
	}
	return data, nil
}

// load loads, decodes and checks chunk d and caches it. Its size is the
// chunk's own: Get compares it with each index entry. A panic in the
// load (a decoder bug met by a hostile chunk) is its error: the waiters
// of a collapsed load are released with it, and the process lives on.
func (c *Cache) load(ctx context.Context, key *crypt.Key, d chunk.Digest, ck string) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.Stats.Errors.Add(1)
			slog.Error("chunk load panicked", "digest", d.String(), "panic", p, "stack", string(debug.Stack()))
			data, err = nil, fmt.Errorf("chunk %s: %w: %v", d, errLoadPanic, p)
		}
	}()
	const size = -1 // any: the digest is checked, the size is Get's
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, ErrCacheClosed
	}
	if data, err = c.loadBlob(ctx, key, d, size); err != nil {
		c.Stats.Errors.Add(1)
		return nil, err
	}
	c.Stats.DecodedBytes.Add(int64(len(data)))
	if c.rc.Set(ck, data, int64(cap(data))) {
		c.rc.Wait() // make it visible before the load ends: a Get right after must hit
	}
	return data, nil
}

// blobBufs are the buffers of compressed blobs read (not mapped) by
// loads: a blob is garbage once decoded, and a fresh 4 MiB buffer per
// load costs page faults on memory the runtime just gave back.
var blobBufs sync.Pool

// loadBlob decodes a chunk from its mapped file (or, when the page cache
// does not hold it, from a reused buffer): no copy of the blob and no
// allocation for it. Plain data is copied out of a mapping, since the
// cache keeps it. With key, an encrypted chunk is decrypted and checked
// against the keyed digest (chunk.DecodeChunkKey).
func (c *Cache) loadBlob(ctx context.Context, key *crypt.Key, d chunk.Digest, size int) (data []byte, err error) {
	var buf []byte
	if b, ok := blobBufs.Get().(*[]byte); ok {
		buf = *b
	}
	blob, err := c.src.ReadChunk(ctx, d, ChunkOptions{Buf: buf, Map: MapCompressed})
	if err != nil {
		if buf != nil {
			blobBufs.Put(&buf)
		}
		return nil, err
	}
	defer blob.Release()
	c.Stats.LoadedBytes.Add(int64(len(blob.Bytes())))
	aliased := false // data lives in the blob's buffer
	err = blob.Do(func(b []byte) error {
		kind, _ := chunk.BlobKind(b)
		var dst []byte
		switch {
		case kind == chunk.KindPlain && !blob.inBuf:
			dst = make([]byte, 0, len(b)) // out of a mapping, or memory not ours
		case kind == chunk.KindEncrypted && blob.inBuf && key != nil:
			dst = b[chunk.EncryptedHeaderSize:chunk.EncryptedHeaderSize] // decrypted in place
		}
		if key != nil {
			data, err = chunk.DecodeChunkKey(dst, b, d, size, key)
		} else {
			data, err = chunk.DecodeChunk(dst, b, d, size)
		}
		if err != nil {
			return fmt.Errorf("chunk %s: %w: %w", d, ErrCorruptChunk, err)
		}
		aliased = blob.inBuf && inside(data, b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case !blob.inBuf && buf != nil: // not used
		blobBufs.Put(&buf)
	case blob.inBuf && !aliased: // free again
		b := blob.Bytes()
		blobBufs.Put(&b)
	}
	return data, nil
}

// inside reports whether data's memory lies in b's (b[:cap(b)]).
func inside(data, b []byte) bool {
	if cap(data) == 0 || cap(b) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return p >= start && p < start+uintptr(cap(b))
}

// IsChunkError reports whether err is a missing or corrupt chunk.
func IsChunkError(err error) bool {
	return errors.Is(err, ErrCorruptChunk) || errors.Is(err, ErrMissingChunk)
}
