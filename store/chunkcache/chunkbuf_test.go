package chunkcache

import (
	"bytes"
	"context"
	"testing"
)

// bigChunkImage writes data as an image of 4 MiB chunks (the size whose
// buffers a cache recycles) and returns a reader of it without
// read-ahead through a new cache of cacheSize bytes.
func bigChunkImage(t *testing.T, data []byte, cacheSize int64) (*Reader, *Cache) {
	t.Helper()
	r, c := imageReader(t, data, 4<<20, cacheSize)
	r.readahead = 0
	return r, c
}

// TestHeldNotRecycled holds a slice of a chunk while every other chunk
// of the image is read through a cache of three chunks: the held chunk
// is evicted and buffers are recycled around it, but its bytes stay as
// they were until it is released; then its buffer is free. Data
// handed out by Get (no reference) is never recycled.
func TestHeldNotRecycled(t *testing.T) {
	const cs = 4 << 20
	data := randBytes(10*cs, 8)
	r, c := bigChunkImage(t, data, 16<<20)
	h, ok, err := r.Slice(context.Background(), 100, cs-200)
	if err != nil || !ok {
		t.Fatalf("slice: %v, %v", ok, err)
	}
	d, _, _ := r.idx.Chunk(1)
	escaped, err := c.Get(context.Background(), d, cs)
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader's recent chunks: only h and escaped hold theirs
	for pass := range 3 {
		for i := 2; i < 10; i++ {
			readCheck(t, r, data, int64(i*cs), cs)
		}
		if !bytes.Equal(h.Data, data[100:cs-100]) || !bytes.Equal(escaped, data[cs:2*cs]) {
			t.Fatalf("pass %d: a held chunk changed while held", pass)
		}
	}
	if c.Stats.BuffersReused.Load() == 0 {
		t.Fatal("no buffer was reused")
	}
	h.Release()
	if n := h.b.refs.Load(); n != 0 || c.pool.len() == 0 {
		t.Errorf("after the release: %d references, %d buffers free; want 0 and the freed one", n, c.pool.len())
	}
	for i := 2; i < 10; i++ {
		readCheck(t, r, data, int64(i*cs), cs)
	}
	if !bytes.Equal(escaped, data[cs:2*cs]) {
		t.Fatal("data handed out by Get was recycled")
	}
}

// TestFreeListBound: however many buffers come back, the free list keeps
// at most its bound (an eighth of the cache, 2 to 16 buffers).
func TestFreeListBound(t *testing.T) {
	for _, tt := range []struct {
		cache int64
		max   int
	}{{16 << 20, 6}, {256 << 20, 7}, {1 << 30, 16}, {64 << 30, 16}} {
		c, err := New(nil, tt.cache)
		if err != nil {
			t.Fatal(err)
		}
		bufs := make([][]byte, 40)
		for i := range bufs {
			bufs[i] = c.pool.get()
		}
		for _, b := range bufs {
			c.pool.put(b)
		}
		c.pool.put(make([]byte, 100)) // not a buffer of the pool: dropped
		if n := c.pool.len(); n != tt.max {
			t.Errorf("cache %d MiB: %d buffers kept, want %d", tt.cache>>20, n, tt.max)
		}
		if tt.cache >= 64<<20 && int64(tt.max)*bufClass > tt.cache/8 {
			t.Errorf("cache %d MiB: the free list may hold more than an eighth of it", tt.cache>>20)
		}
		c.Close()
	}
}

// TestRefsNeverResurrect: a chunk whose count reached zero cannot be
// taken again (its buffer may hold another chunk by then).
func TestRefsNeverResurrect(t *testing.T) {
	p := &bufPool{max: 1, stats: new(Stats)}
	b := &chunkBuf{full: p.get(), pool: p}
	b.refs.Store(1)
	if !b.acquire() {
		t.Fatal("acquire of a live chunk failed")
	}
	b.release()
	b.release()
	if b.acquire() {
		t.Fatal("a released chunk was taken again")
	}
	if p.len() != 1 {
		t.Fatalf("free list holds %d, want the released buffer", p.len())
	}
}

// TestScanShare reads an image of 12 chunks from start to end through
// a cache of 64 MiB: with LimitScans the chunks of the sequential reads
// take at most an eighth of the cache, and a chunk random reads keep
// coming back to stays cached; without it (file archives) the scan is
// cached like any read.
func TestScanShare(t *testing.T) {
	const cs = 4 << 20
	data := randBytes(12*cs, 9)
	for _, limit := range []bool{true, false} {
		r, c := bigChunkImage(t, data, 64<<20)
		r.readahead = 2
		r.slots = make(chan struct{}, 2)
		if limit {
			r.LimitScans()
		}
		readCheck(t, r, data, 5*cs+7, 4096) // a random read: cached
		for off := 0; off < len(data); off += 1 << 20 {
			readCheck(t, r, data, int64(off), 1<<20)
			if n := c.scanned.Load(); n > c.MaxBytes()/scanShare {
				t.Fatalf("scan chunks hold %d bytes of the cache, more than an eighth", n)
			}
		}
		waitPrefetches(r)
		r.Close()
		scanned, misses := c.scanned.Load(), c.Stats.Misses.Load()
		readCheck(t, r, data, 5*cs+9, 4096)
		if c.Stats.Misses.Load() != misses {
			t.Errorf("limit %v: the chunk read at random was evicted by the scan", limit)
		}
		if (scanned > 0) != limit {
			t.Errorf("limit %v: %d bytes counted as scanned", limit, scanned)
		}
		for i := range 12 { // again: what the scan left out of the cache loads again
			readCheck(t, r, data, int64(i*cs+11), 4096)
		}
		if again := c.Stats.Misses.Load() - misses; limit != (again > 6) {
			t.Errorf("limit %v: %d of 12 chunks missed when read again", limit, again)
		}
	}
}
