package chunkcache

import (
	"testing"
)

// classImage writes data as an image of chunks of cs bytes, every
// other one compressible (decoded into a buffer of the pool) and the
// others not (used in place of the blob read), and returns a reader of
// it loading one chunk ahead through a new cache of cacheSize bytes.
func classImage(t *testing.T, data []byte, cs int, cacheSize int64) (*Reader, *Cache) {
	t.Helper()
	for i := 0; i < len(data); i += 2 * cs {
		// Compressible (3/4 zeros), and unlike any other chunk (its
		// random last quarter).
		clear(data[i:min(i+cs*3/4, len(data))])
	}
	return imageReaderAhead(t, data, cs, cacheSize, 1)
}

// TestClassesRecycled reads images of chunks of other sizes than 4 MiB
// (a file archive's dynamic chunks are mostly 1-2 MiB, up to 16 MiB)
// three times through a cache of 8 MiB, loading one chunk ahead: their
// buffers are recycled within their size class, so most loads reuse a
// buffer instead of touching new memory, and every byte reads back.
// Each image is twice the cache (at least 6 chunks: 48 MiB of 8 MiB
// ones), so every pass loads most chunks again; the free list's bound
// is that of any cache under 64 MiB (minFreeBuffers). The cache was of
// 16 MiB with four chunks ahead, and the images twice as big: 160 MiB
// encoded and read three times, 35 CPU-s under -race.
func TestClassesRecycled(t *testing.T) {
	for _, cs := range []int{256 << 10, 1 << 20, 2 << 20, 8 << 20} {
		n := max(6, 16<<20/cs)
		data := randBytes(n*cs, uint64(cs))
		r, c := classImage(t, data, cs, 8<<20)
		for range 3 {
			for off := 0; off < len(data); off += 256 << 10 {
				readCheck(t, r, data, int64(off), 256<<10)
			}
		}
		waitPrefetches(r)
		r.Close()
		reused, fresh := c.Stats.BuffersReused.Load(), c.Stats.BuffersNew.Load()
		t.Logf("chunks of %d KiB: %d buffers reused, %d new, %d loads", cs>>10, reused, fresh, c.Stats.Misses.Load())
		if reused < 2*fresh || reused < c.Stats.Misses.Load()/2 {
			t.Errorf("chunks of %d KiB: %d buffers reused, %d new; want most loads to reuse one (misses %d, hits %d)", cs>>10, reused, fresh, c.Stats.Misses.Load(), c.Stats.Hits.Load())
		}
		if b := c.pool.bytes; b > c.pool.max*bufClass && c.pool.len() > 1 {
			t.Errorf("chunks of %d KiB: the free list holds %d bytes, more than its bound", cs>>10, b)
		}
	}
}

// TestClassOf: a chunk goes to the smallest class it fits with an
// encrypted blob's header; the smallest chunks and those over 16 MiB
// have none, and each class's own capacity maps back to it.
func TestClassOf(t *testing.T) {
	for _, tt := range []struct {
		n, class int
		ok       bool
	}{
		{100, 0, false}, {128<<10 + 2047, 0, false}, {128<<10 + 2048, 0, true}, {256 << 10, 0, true},
		{256<<10 + 4090, 1, true}, {1 << 20, 2, true}, {1<<20 + 5000, 3, true}, {4 << 20, imageClass, true},
		{16 << 20, 6, true}, {16<<20 + 5000, 0, false},
	} {
		k, ok := classOf(tt.n)
		if ok != tt.ok || (ok && k != tt.class) {
			t.Errorf("classOf(%d) = %d, %v; want %d, %v", tt.n, k, ok, tt.class, tt.ok)
		}
	}
	if classCap(imageClass) != bufClass {
		t.Errorf("the image class holds %d bytes, want %d", classCap(imageClass), bufClass)
	}
}

// TestFreeListClassBound: however many buffers of every class come
// back, the free list keeps at most its bytes (or one buffer bigger than
// them) and maxFreeBuffers of a class.
func TestFreeListClassBound(t *testing.T) {
	for _, max := range []int{1, 6, 16} {
		p := &bufPool{max: max, stats: new(Stats)}
		var bufs [][]byte
		for k := range numClasses {
			for range 40 {
				bufs = append(bufs, p.getClass(k))
			}
		}
		for _, b := range bufs {
			p.put(b)
		}
		if p.bytes > max*bufClass && p.len() > 1 {
			t.Errorf("max %d: %d bytes kept in %d buffers, bound %d", max, p.bytes, p.len(), max*bufClass)
		}
		for k, f := range p.free {
			if len(f) > maxFreeBuffers {
				t.Errorf("max %d: class %d keeps %d buffers", max, k, len(f))
			}
			for _, b := range f {
				if cap(b) != classCap(k) {
					t.Errorf("max %d: a buffer of %d bytes among class %d", max, cap(b), k)
				}
			}
		}
		if p.len() == 0 {
			t.Errorf("max %d: nothing kept", max)
		}
	}
}
