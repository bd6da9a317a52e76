package gc

import (
	"encoding/binary"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// DefaultCacheEntries is the touched-digest cache's size, as PBS's
// default gc-cache-capacity: about 1 million digests, 32 MiB.
const DefaultCacheEntries = 1 << 20

// cacheWays is the number of digests per set.
const cacheWays = 8

// touchedCache remembers digests phase 1 has touched recently, so that
// chunks shared by many indexes (every snapshot of a group shares most
// of its chunks with the one before) are touched once, in a fixed amount
// of memory: a set-associative table of sets of cacheWays digests, the
// set chosen by the digest's own (uniformly distributed) bits, the
// oldest entry of a full set replaced. It holds whole digests, so a hit
// is never a different chunk: a chunk is only skipped when it was
// touched by this GC. Safe for concurrent use (a lock per set).
//
// Its memory is an anonymous mapping, outside the Go heap: the garbage
// collector would otherwise let the heap grow to twice the cache before
// it collects the little garbage phase 1 makes, doubling its footprint.
type touchedCache struct {
	sets []cacheSet
	mask uint64
	mem  []byte // the mapping the sets live in
}

type cacheSet struct {
	mu   sync.Mutex
	used uint8 // entries in use (they fill from 0)
	next uint8 // the entry replaced next once full
	keys [cacheWays]chunk.Digest
}

// newTouchedCache returns a cache of about entries digests (at least one
// set; the number of sets is rounded down to a power of two). Where an
// anonymous mapping cannot be made, the sets are on the heap.
func newTouchedCache(entries int) *touchedCache {
	n := max(entries/cacheWays, 1)
	n = 1 << (bits.Len(uint(n)) - 1)
	c := &touchedCache{mask: uint64(n - 1)}
	size := n * int(unsafe.Sizeof(cacheSet{}))
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		c.sets = make([]cacheSet, n)
		return c
	}
	// zeroed memory is n empty sets; cacheSet holds no Go pointers
	c.mem, c.sets = mem, unsafe.Slice((*cacheSet)(unsafe.Pointer(&mem[0])), n)
	return c
}

// free releases the cache's memory; it must not be used afterwards.
func (c *touchedCache) free() {
	c.sets = nil
	if c.mem != nil {
		unix.Munmap(c.mem)
		c.mem = nil
	}
}

// capacity is how many digests the cache holds.
func (c *touchedCache) capacity() int { return len(c.sets) * cacheWays }

func (c *touchedCache) set(d *chunk.Digest) *cacheSet {
	return &c.sets[binary.LittleEndian.Uint64(d[8:16])&c.mask]
}

// has reports whether d is in the cache.
func (c *touchedCache) has(d chunk.Digest) bool {
	s := c.set(&d)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := uint8(0); i < s.used; i++ {
		if s.keys[i] == d {
			return true
		}
	}
	return false
}

// add puts d in the cache, replacing its set's oldest entry when full.
func (c *touchedCache) add(d chunk.Digest) {
	s := c.set(&d)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := uint8(0); i < s.used; i++ {
		if s.keys[i] == d {
			return
		}
	}
	if s.used < cacheWays {
		s.keys[s.used] = d
		s.used++
		return
	}
	s.keys[s.next] = d
	s.next = (s.next + 1) % cacheWays
}
