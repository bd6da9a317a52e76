package chunkcache

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
)

// Stats counts cache activity; read with Load.
type Stats struct {
	Hits, Misses  atomic.Int64
	LoadedBytes   atomic.Int64 // blob bytes read from the store
	DecodedBytes  atomic.Int64 // plain bytes produced by loads
	ZeroHits      atomic.Int64 // zero chunks served without I/O
	Errors        atomic.Int64
	Collapsed     atomic.Int64 // misses that joined a load in flight
	PrefetchLoads atomic.Int64
	BuffersReused atomic.Int64 // loads into a recycled buffer
	BuffersNew    atomic.Int64 // loads into a new one
}

// Cache is a byte-bounded cache of decoded, digest-checked chunks shared by
// every reader of a store. Concurrent misses of one digest are collapsed
// into one load. Returned slices are shared: callers must not modify them.
// The buffers of chunks it drops are recycled (chunkbuf.go).
type Cache struct {
	src      Source
	rc       *ristretto.Cache[string, *chunkBuf]
	pool     *bufPool
	maxBytes int64
	scanned  atomic.Int64 // bytes of scan chunks cached (scanShare)
	Stats    Stats
	zeros    sync.Map // size → *zeroChunk

	fmu    sync.Mutex
	flight map[string]*flight // loads in progress, by cache key

	mu     sync.RWMutex // held shared by loads, exclusively by Close
	closed bool
}

// ErrCorrupt is returned for a chunk that failed its check (it does not
// decode, or its digest differs); store.ErrCorruptChunk is this error.
var ErrCorrupt = errors.New("corrupt chunk")

// ErrClosed is returned by Get after Close.
var ErrClosed = errors.New("chunk cache closed")

// ErrSizeMismatch is returned when a good chunk's size differs from what the
// index entry asking for it says: the index is wrong, not the chunk.
var ErrSizeMismatch = errors.New("chunk size differs from the index")

// errLoadPanic is returned to every waiter of a load that panicked.
var errLoadPanic = errors.New("chunk load failed")

type zeroChunk struct {
	d chunk.Digest
	b *chunkBuf // holds a reference of its own: never recycled
}

// logger is where a load's panic is logged: the source's logger when it
// has one (a store's), else nowhere.
func (c *Cache) logger() *slog.Logger {
	if l, ok := c.src.(interface{ Logger() *slog.Logger }); ok {
		return l.Logger()
	}
	return slog.New(slog.DiscardHandler)
}

// DefaultSize is the default bound of a Cache.
const DefaultSize = 256 << 20

// New returns a cache of src's chunks bounded to maxBytes of
// decoded data, an eighth of it for the free list of recycled buffers
// included. The free list holds an eighth of maxBytes, at least 6 and at
// most 16 buffers' worth of 4 MiB: what it holds beyond the eighth (all
// of it under 64 MiB) comes on top, 24 MiB at most.
func New(src Source, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultSize
	}
	n := min(max(maxBytes/8/bufClass, minFreeBuffers), maxFreeBuffers)
	c := &Cache{src: src, flight: map[string]*flight{}, maxBytes: maxBytes}
	c.pool = &bufPool{max: int(n), stats: &c.Stats}
	cost := maxBytes
	if maxBytes >= 64<<20 {
		cost -= min(n*bufClass, maxBytes/8)
	}
	counters := max(maxBytes/(64<<10)*10, 10000)
	rc, err := ristretto.NewCache(&ristretto.Config[string, *chunkBuf]{
		NumCounters: counters, MaxCost: cost, BufferItems: 64,
		IgnoreInternalCost: true,
		OnExit:             (*chunkBuf).uncache, // evicted, rejected or replaced
	})
	if err != nil {
		return nil, fmt.Errorf("chunk cache: %w", err)
	}
	c.rc = rc
	return c, nil
}

// scanShare is the part of a cache that chunks loaded for scans (the
// sequential reads of a reader that LimitScans) may take, at most
// maxScanBytes: a dd of an image does not flush the chunks random
// readers of other images (or of the same one) keep coming back to, and
// streams through recycled buffers instead of filling the cache with
// memory never touched before. A scan's chunks beyond the share are held
// by the reader (its read-ahead and recent chunks) and recycled when it
// moves on. The bound by bytes keeps a big cache from taking a new
// buffer for each chunk of a scan's first 1/8 (96 MiB of a 768 MiB
// cache: a page fault per 4 KiB, about 0.7 CPU-s on the test VM) for
// chunks a scan seldom reads again; the kernel's page cache keeps what
// it read (FOPEN_KEEP_CACHE).
const (
	scanShare    = 8 // 1/8
	maxScanBytes = 4 * bufClass
)

// scanBytes is how many bytes of scan chunks the cache keeps at most.
func (c *Cache) scanBytes() int64 { return min(c.maxBytes/scanShare, maxScanBytes) }

// admitScan reports whether chunk b, loaded for a scan, may be cached
// within the scan share, and counts it there if so.
func (c *Cache) admitScan(b *chunkBuf, cost int64) bool {
	if c.scanned.Add(cost) > c.scanBytes() {
		c.scanned.Add(-cost)
		return false
	}
	b.scanCost, b.scanned = cost, &c.scanned
	return true
}

// MaxBytes returns the cache's bound.
func (c *Cache) MaxBytes() int64 { return c.maxBytes }

// Close waits for loads in flight (prefetches among them) and releases
// the cache; later Gets fail with ErrClosed.
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
	z := &zeroChunk{d: chunk.ZeroDigest(size), b: &chunkBuf{data: make([]byte, size)}}
	z.b.refs.Store(1)
	v, _ := c.zeros.LoadOrStore(size, z)
	return v.(*zeroChunk)
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
// two sizes; the chunk itself stays cached, it is good). The data is
// never recycled: GetHeld, whose data is, costs less memory.
func (c *Cache) Get(ctx context.Context, d chunk.Digest, size int) ([]byte, error) {
	return c.GetKey(ctx, nil, d, size)
}

// GetHeld is GetKey whose data is held until Release (chunkbuf.go).
func (c *Cache) GetHeld(ctx context.Context, key *crypt.Key, d chunk.Digest, size int) (Held, error) {
	b, err := c.get(ctx, key, d, size, false)
	if err != nil {
		return Held{}, err
	}
	return Held{Data: b.data, b: b}, nil
}

// get returns chunk d with a reference the caller releases. A zero
// chunk of a plain read comes from the shared zero buffer. A chunk read
// with a key is cached under the key's fingerprint and its digest, a
// plain one under its digest: what was checked under one key is never
// served to a reader of another, nor to a plain reader. A chunk loaded
// for a scan is cached only within the scan share (scanShare).
func (c *Cache) get(ctx context.Context, key *crypt.Key, d chunk.Digest, size int, scan bool) (*chunkBuf, error) {
	if z := c.zero(size); key == nil && z != nil && z.d == d {
		c.Stats.ZeroHits.Add(1)
		z.b.acquire()
		return z.b, nil
	}
	ck := cacheKey(key, d)
	if b, ok := c.rc.Get(ck); ok && b != nil && b.acquire() {
		c.Stats.Hits.Add(1)
		return checkSize(d, b, size)
	}
	c.Stats.Misses.Add(1)
	b, err := c.join(ctx, ck, func() (*chunkBuf, error) {
		return c.load(context.WithoutCancel(ctx), key, d, ck, size, scan)
	})
	if err != nil {
		return nil, err
	}
	return checkSize(d, b, size)
}

// cacheKey is the cache's key of chunk d read with key (nil: plain).
func cacheKey(key *crypt.Key, d chunk.Digest) string {
	if key == nil {
		return string(d[:])
	}
	fp := key.Fingerprint()
	return string(fp[:]) + string(d[:])
}

// checkSize returns b if it holds size bytes, else releases it and
// returns an ErrSizeMismatch.
func checkSize(d chunk.Digest, b *chunkBuf, size int) (*chunkBuf, error) {
	if len(b.data) != size {
		b.release()
		return nil, fmt.Errorf("chunk %s: %w: the chunk holds %d bytes, the index entry says %d", d, ErrSizeMismatch, len(b.data), size)
	}
	return b, nil
}

// load loads, decodes and checks chunk d and caches it; the chunk comes
// with the caller's reference. Its size is the chunk's own: get compares
// it with each index entry. A panic in the load (a decoder bug met by a
// hostile chunk) is its error: the waiters of a collapsed load are
// released with it, and the process lives on.
func (c *Cache) load(ctx context.Context, key *crypt.Key, d chunk.Digest, ck string, hint int, scan bool) (b *chunkBuf, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.Stats.Errors.Add(1)
			c.logger().Error("chunk load panicked", "digest", d.String(), "panic", p, "stack", string(debug.Stack()))
			b, err = nil, fmt.Errorf("chunk %s: %w: %v", d, errLoadPanic, p)
		}
	}()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, ErrClosed
	}
	if b, err = c.loadBlob(ctx, key, d, hint, scan); err != nil {
		c.Stats.Errors.Add(1)
		return nil, err
	}
	c.Stats.DecodedBytes.Add(int64(len(b.data)))
	cost := int64(cap(b.data))
	if b.full != nil {
		cost = int64(cap(b.full))
	}
	b.refs.Store(1) // the caller's
	if scan && !c.admitScan(b, cost) {
		return b, nil // held by its readers only, then recycled
	}
	b.refs.Add(1) // the cache's
	b.cached.Store(true)
	if c.rc.Set(ck, b, cost) {
		c.rc.Wait() // make it visible before the load ends: a get right after must hit
	} else {
		b.uncache() // dropped: never in the cache, no OnExit
	}
	return b, nil
}

// blobBufs are the buffers of compressed blobs read (not mapped) by
// loads of chunks that have no buffer class (classOf): a blob is
// garbage once decoded.
var blobBufs sync.Pool

// loadBlob decodes a chunk from its mapped file (or, when the page cache
// does not hold it, from a reused buffer): plain data is used in place
// of a blob read, or copied out of a mapping (the cache keeps it). With
// key, an encrypted chunk is decrypted (in place in a read buffer) and
// checked against the keyed digest. The blob's CRC is not computed: the
// data's digest is checked (chunk.DecodeChunkData), and the cache keeps
// the data only. A chunk of
// about hint bytes that has a buffer class is read and decoded into the
// pool's buffers of its class. scan is the source's (Source.ReadBlob).
func (c *Cache) loadBlob(ctx context.Context, key *crypt.Key, d chunk.Digest, hint int, scan bool) (*chunkBuf, error) {
	const size = -1 // any: the digest is checked, the size is get's
	class, usePool := classOf(hint)
	var buf []byte
	if usePool {
		buf = c.pool.getClass(class)
	} else if b, ok := blobBufs.Get().(*[]byte); ok {
		buf = *b
	}
	giveBack := func(b []byte) {
		switch {
		case usePool:
			c.pool.put(b) // keeps only whole buffers of the pool
		case cap(b) > 0:
			blobBufs.Put(&b)
		}
	}
	blob, err := c.src.ReadBlob(ctx, d, buf, scan)
	if err != nil {
		giveBack(buf)
		return nil, err
	}
	defer blob.Release()
	if blob.InBuf() && !inside(blob.Bytes(), buf) {
		giveBack(buf)
		buf = blob.Bytes() // grown past buf: read into a new one
	} else if !blob.InBuf() {
		giveBack(buf) // mapped, or memory not ours
		buf = nil
	}
	c.Stats.LoadedBytes.Add(int64(len(blob.Bytes())))
	var data, dst []byte // dst: a buffer of the pool to decode into
	err = blob.Do(func(b []byte) error {
		var out []byte // where the data goes: nil lets the decoder choose
		kind, _ := chunk.BlobKind(b)
		switch {
		case kind == chunk.KindPlain && blob.InBuf(): // used in place
		case kind == chunk.KindEncrypted && blob.InBuf() && key != nil:
			out = b[chunk.EncryptedHeaderSize:chunk.EncryptedHeaderSize] // decrypted in place
		case usePool && len(b) <= classCap(class):
			dst = c.pool.getClass(class)
			out = dst
		case kind == chunk.KindPlain: // out of a mapping, or memory not ours
			out = make([]byte, 0, len(b))
		}
		var err error
		data, err = chunk.DecodeChunkData(out, b, d, size, key)
		if err != nil {
			return fmt.Errorf("chunk %s: %w: %w", d, ErrCorrupt, err)
		}
		return nil
	})
	cb := &chunkBuf{data: data, pool: c.pool}
	switch {
	case err != nil:
	case buf != nil && inside(data, buf): // in place: buf is the chunk's now
		if usePool {
			cb.full = buf
		}
		buf = nil
	case dst != nil && inside(data, dst):
		cb.full, dst = dst, nil
	}
	if buf != nil {
		giveBack(buf)
	}
	c.pool.put(dst)
	if err != nil {
		return nil, err
	}
	return cb, nil
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
