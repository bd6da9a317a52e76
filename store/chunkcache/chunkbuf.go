package chunkcache

import (
	"sync"
	"sync/atomic"

	"github.com/cairnfs/cairn/chunk"
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
// Reader.Slice) takes one and gives it back with Release (for the
// mount, after the kernel got the reply), and so does each of an
// Reader's recent chunks. A reference is only ever taken from a
// count above zero: once it reached zero the buffer may hold another
// chunk, and the chunkBuf (one per chunk load, never reused) stays
// dead. Data handed out without a reference (Get, GetKey) marks its
// buffer escaped: it is never recycled and the GC frees it.

// Buffers come in size classes: a power of two from 256 KiB to 16 MiB
// plus directio.Align (room for a blob's header and O_DIRECT's
// alignment). A chunk goes to the smallest class it fits with its blob's
// header and is recycled within it: fixed chunks of an image are 4 MiB,
// the dynamic chunks of a file archive anything from a few KiB to 16 MiB
// (Go's tree: mostly 1-2 MiB). A chunk smaller than half the smallest
// class gets a buffer of its own.
const (
	minClassShift = 18 // 256 KiB
	numClasses    = 7  // up to 16 MiB
)

// bufClass is the capacity of the class of 4 MiB chunks (those of
// images), the unit the cache's free list is bounded in.
const (
	bufClass   = 4<<20 + directio.Align
	imageClass = 22 - minClassShift // bufClass's
)

// classCap returns the capacity of class k's buffers.
func classCap(k int) int { return 1<<(minClassShift+k) + directio.Align }

// classOf returns the class of a chunk of n bytes, false when it has
// none (too small to be worth a buffer of a class, or too big).
func classOf(n int) (int, bool) {
	if n < classCap(0)/2 {
		return 0, false
	}
	for k := range numClasses {
		if n+chunk.EncryptedHeaderSize <= classCap(k) {
			return k, true
		}
	}
	return 0, false
}

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

// bufPool is a free list of buffers of every class, bounded by bytes
// (max buffers of bufClass in all, or one buffer of a bigger class) and
// by count (at most maxFreeBuffers of a class).
type bufPool struct {
	mu    sync.Mutex
	free  [numClasses][][]byte
	bytes int // on the lists
	max   int // bufClass buffers' worth kept at most
	stats *Stats
}

// A free list holds from minFreeBuffers to maxFreeBuffers buffers'
// worth of bytes (bufClass each: New chooses within these by the
// cache's size), and at most maxFreeBuffers of a class. A file archive's
// restore, whose cache is small, has about 24 chunks of 1-2 MiB in use
// at a time (cached, recent, loaded ahead), and as many fewer a moment
// later: with only two buffers' worth kept, half the loads took a new
// buffer.
const (
	minFreeBuffers = 6
	maxFreeBuffers = 16
)

// get returns an empty, aligned buffer of capacity bufClass.
func (p *bufPool) get() []byte {
	return p.getClass(imageClass)
}

// getClass returns an empty, aligned buffer of class k's capacity.
func (p *bufPool) getClass(k int) []byte {
	p.mu.Lock()
	if n := len(p.free[k]); n > 0 {
		b := p.free[k][n-1]
		p.free[k][n-1] = nil
		p.free[k] = p.free[k][:n-1]
		p.bytes -= cap(b)
		p.mu.Unlock()
		p.stats.BuffersReused.Add(1)
		return b[:0]
	}
	p.mu.Unlock()
	p.stats.BuffersNew.Add(1)
	var b []byte
	return directio.Buf(&b, classCap(k))[:0:classCap(k)]
}

// put keeps b for a later get when it is a whole buffer of a class and
// the list has room; else the GC frees it.
func (p *bufPool) put(b []byte) {
	k, ok := classOf(cap(b) - chunk.EncryptedHeaderSize)
	if !ok || cap(b) != classCap(k) || !directio.Aligned(b) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	limit := p.max * bufClass
	if len(p.free[k]) < maxFreeBuffers && p.bytes+cap(b) <= max(limit, cap(b)) {
		p.free[k] = append(p.free[k], b[:0])
		p.bytes += cap(b)
	}
}

// len returns the buffers on the list.
func (p *bufPool) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, f := range p.free {
		n += len(f)
	}
	return n
}
