package store

import (
	"sync"
	"sync/atomic"

	"github.com/cairnfs/cairn/internal/directio"
)

// Recycled chunk buffers. Memory the process has not touched before
// costs a page fault per 4 KiB on first use (about 16 µs each on a VM,
// 15-20 ms for a 4 MiB chunk), and Go hands a freed buffer back to the
// OS soon under the mount's memory limit. So the buffers a cache loads
// chunks into are recycled: when the cache drops a chunk and nobody
// reads it any more, its buffer goes on a bounded free list for the
// next load.
//
// Who may still read a chunk is counted: the cache holds a reference
// while it keeps the chunk, every Get of the reference API (GetHeld,
// IndexReader.Slice) takes one and gives it back with Release (for the
// mount, after the kernel got the reply), and so does each of an
// IndexReader's recent chunks. A reference is only ever taken from a
// count above zero: once it reached zero the buffer may hold another
// chunk, and the chunkBuf (one per chunk load, never reused) stays
// dead. Data handed out without a reference (Get, GetKey) marks its
// buffer escaped: it is never recycled and the GC frees it.

// bufClass is the capacity of a recyclable buffer: a 4 MiB chunk, or
// its blob (header included), rounded up for O_DIRECT. Chunks of other
// sizes (the dynamic chunks of file archives vary) get buffers of their
// own, which are not recycled when they do not have this capacity.
const bufClass = 4<<20 + directio.Align

// chunkBuf is one load of a chunk: its plain data and the buffer it
// lies in. It is never reused; its buffer is.
type chunkBuf struct {
	data    []byte
	full    []byte   // the recyclable buffer data lies in; nil: none
	pool    *bufPool // where full goes back
	refs    atomic.Int32
	cached  atomic.Bool // the cache holds one of the refs
	escaped atomic.Bool // handed out without a reference: never recycle

	scanCost int64         // counted in *scanned while cached
	scanned  *atomic.Int64 // the cache's bytes of scan chunks (admitScan)
}

// acquire takes a reference unless the count reached zero (the buffer
// may hold another chunk by now).
func (b *chunkBuf) acquire() bool {
	for {
		n := b.refs.Load()
		if n <= 0 {
			return false
		}
		if b.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release gives a reference back; the last one puts the buffer on the
// free list.
func (b *chunkBuf) release() {
	if b.refs.Add(-1) == 0 && b.full != nil && !b.escaped.Load() {
		b.pool.put(b.full)
	}
}

// uncache gives back the cache's reference, once.
func (b *chunkBuf) uncache() {
	if b != nil && b.cached.CompareAndSwap(true, false) {
		if b.scanned != nil {
			b.scanned.Add(-b.scanCost)
		}
		b.release()
	}
}

// Held is a chunk's data (or a part of it) held from recycling until
// Release. Data must not be modified, nor read after Release. The zero
// Held holds nothing; Release of it does nothing.
type Held struct {
	Data []byte
	b    *chunkBuf
}

// Release gives the reference back. Call it once.
func (h Held) Release() {
	if h.b != nil {
		h.b.release()
	}
}

// bufPool is a free list of bufClass buffers, bounded by count and bytes.
type bufPool struct {
	mu    sync.Mutex
	free  [][]byte
	max   int // buffers kept at most
	stats *CacheStats
}

// maxFreeBuffers bounds a free list by count (NewCache bounds it by
// bytes too).
const maxFreeBuffers = 16

// get returns an empty, aligned buffer of capacity bufClass.
func (p *bufPool) get() []byte {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		p.stats.BuffersReused.Add(1)
		return b[:0]
	}
	p.mu.Unlock()
	p.stats.BuffersNew.Add(1)
	var b []byte
	return directio.Buf(&b, bufClass)[:0:bufClass]
}

// put keeps b for a later get when it is a whole buffer of the class
// and the list has room; else the GC frees it.
func (p *bufPool) put(b []byte) {
	if cap(b) != bufClass || !directio.Aligned(b) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < p.max {
		p.free = append(p.free, b[:0])
	}
}

// len returns the buffers on the list.
func (p *bufPool) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}
