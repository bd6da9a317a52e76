package gc

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/chunk"
)

func digestOf(i int) chunk.Digest {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(i))
	return sha256.Sum256(b[:])
}

// The cache holds at most its capacity, never answers for a digest it
// was not given, and keeps recently added ones.
func TestTouchedCache(t *testing.T) {
	c := newTouchedCache(1000)
	if c.capacity() != 512 { // 125 sets rounded down to 64, of 8
		t.Fatalf("capacity %d", c.capacity())
	}
	for i := range 10000 {
		c.add(digestOf(i))
		if !c.has(digestOf(i)) {
			t.Fatalf("digest %d not kept right after add", i)
		}
	}
	held := 0
	for i := range 10000 {
		if c.has(digestOf(i)) {
			held++
		}
	}
	if held > c.capacity() || held < c.capacity()/2 {
		t.Errorf("holds %d of 10000 digests, capacity %d", held, c.capacity())
	}
	for i := 10000; i < 20000; i++ {
		if c.has(digestOf(i)) {
			t.Fatalf("digest %d never added is reported", i)
		}
	}
	// the most recent ones of each set survive: the last 64 added
	for i := 10000 - 64; i < 10000; i++ {
		if !c.has(digestOf(i)) {
			t.Errorf("recent digest %d evicted", i)
		}
	}
	c.add(digestOf(9999)) // already there: no duplicate entry
	if n := newTouchedCache(0).capacity(); n != cacheWays {
		t.Errorf("smallest cache %d", n)
	}
	if DefaultCacheEntries*chunk.DigestSize > 40<<20 {
		t.Errorf("default cache of %d digests is too large for the memory bound", DefaultCacheEntries)
	}
}

func TestTouchedCacheConcurrent(t *testing.T) {
	c := newTouchedCache(4096)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 5000 {
				d := digestOf(w*100000 + i)
				c.add(d)
				c.has(d)
			}
		})
	}
	wg.Wait()
}
