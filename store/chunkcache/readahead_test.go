package chunkcache

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
)

// readaheadImage writes data as an image of testCS chunks and returns a
// reader of it (readahead 4) through a cache of its own.
func readaheadImage(t *testing.T, data []byte) (*Reader, *Cache) {
	t.Helper()
	return imageReader(t, data, testCS, 64<<20)
}

// waitPrefetches waits until no load ahead of r runs.
func waitPrefetches(r *Reader) {
	for range cap(r.slots) {
		r.slots <- struct{}{}
	}
	for range cap(r.slots) {
		<-r.slots
	}
}

func readCheck(t *testing.T, r *Reader, want []byte, off int64, n int) {
	t.Helper()
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, off); err != nil {
		t.Fatalf("read %d at %d: %v", n, off, err)
	}
	if !bytes.Equal(buf, want[off:off+int64(n)]) {
		t.Fatalf("read %d at %d: content differs", n, off)
	}
}

// TestReadaheadSequentialReads: reads that follow each other, small and
// contiguous or large and out of order (the kernel's read-ahead), load
// ahead; random ones read the right bytes.
func TestReadaheadSequentialReads(t *testing.T) {
	data := randBytes(32*testCS, 5)
	r, c := readaheadImage(t, data)
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		readCheck(t, r, data, int64(rnd.IntN(len(data)-4096)), 4096)
	}
	waitPrefetches(r)
	r.nextOff.Store(-1)
	r.ahead.Store(-1) // as a new reader
	before := c.Stats.PrefetchLoads.Load()
	for off := int64(0); off < 3*4096; off += 4096 { // small and contiguous
		readCheck(t, r, data, off, 4096)
	}
	waitPrefetches(r)
	if c.Stats.PrefetchLoads.Load() == before {
		t.Error("contiguous 4 KiB reads loaded nothing ahead")
	}
	r.nextOff.Store(-1)
	r.ahead.Store(-1)
	before = c.Stats.PrefetchLoads.Load()
	// The kernel's read-ahead: large requests, the second before the first.
	readCheck(t, r, data, 20*testCS+testCS/2, testCS/2)
	readCheck(t, r, data, 20*testCS, testCS/2)
	waitPrefetches(r)
	if c.Stats.PrefetchLoads.Load() == before {
		t.Error("large reads out of order loaded nothing ahead")
	}
}

// TestReadaheadSkipsZeroChunks: the chunks loaded ahead of a read are the
// data chunks past a hole, not the hole's zero chunks; they are then
// served without a load of their own.
func TestReadaheadSkipsZeroChunks(t *testing.T) {
	data := make([]byte, 40*testCS)
	copy(data, randBytes(testCS, 6))
	copy(data[30*testCS:], randBytes(5*testCS, 7)) // chunks 30-34 data
	r, c := readaheadImage(t, data)
	readCheck(t, r, data, 0, 4096)
	readCheck(t, r, data, 4096, 4096) // follows: loads ahead
	waitPrefetches(r)
	if n := c.Stats.PrefetchLoads.Load(); n != int64(r.readahead) {
		t.Errorf("%d chunks loaded ahead, want %d (the data chunks past the hole)", n, r.readahead)
	}
	misses := c.Stats.Misses.Load()
	for i := int64(30); i < 30+int64(r.readahead); i++ {
		r.nextOff.Store(-1) // a seek: load nothing more ahead
		readCheck(t, r, data, i*testCS, testCS)
	}
	if n := c.Stats.Misses.Load() - misses; n != 0 {
		t.Errorf("reading the chunks loaded ahead missed %d times, want 0", n)
	}
	readCheck(t, r, data, 0, len(data)) // and everything reads back
}

// TestRecentByDigest: an index that lists a chunk again a chunk or two
// later (an incremental file archive's payload: [C][new][C]…) is read
// with each distinct chunk loaded once, even through a cache too small
// to keep any.
func TestRecentByDigest(t *testing.T) {
	a, b, c := randBytes(testCS, 1), randBytes(testCS, 2), randBytes(testCS, 3)
	data := bytes.Join([][]byte{a, b, a, c, a, b}, nil)
	src, x := writeImage(t, data, testCS)
	cache, err := New(src, 1) // keeps nothing
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)
	r := NewReader(context.Background(), x, cache, 4)
	for off := int64(0); off < int64(len(data)); off += testCS / 4 {
		readCheck(t, r, data, off, testCS/4)
	}
	waitPrefetches(r)
	if got := cache.Stats.DecodedBytes.Load(); got != 3*testCS {
		t.Errorf("decoded %d bytes for 3 distinct chunks of %d", got, testCS)
	}
}

// TestRecentKeepsChunksAhead: a chunk kept among the recent ones takes
// the place of the one farthest behind the last read, never of a chunk
// loaded ahead and not read yet, in whatever order the loads finished.
func TestRecentKeepsChunksAhead(t *testing.T) {
	data := randBytes(32*testCS, 8)
	src, x := writeImage(t, data, testCS)
	cache, err := New(src, 1) // keeps nothing
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)
	r := NewReader(context.Background(), x, cache, 4) // 6 recent slots
	t.Cleanup(r.Close)
	keep := func(i int) {
		t.Helper()
		d, start, end := x.Chunk(i)
		b, err := cache.get(context.Background(), nil, d, int(end-start), false)
		if err != nil {
			t.Fatal(err)
		}
		r.keepRecent(&recentChunk{i: i, d: d, b: b}) // the slot takes the reference
	}
	r.hint.Store(10) // the last read was in chunk 10
	for _, i := range []int{11, 12, 9, 13, 14, 15} {
		keep(i)
	}
	keep(16)
	for i := 9; i <= 16; i++ {
		d, start, end := x.Chunk(i)
		if want := i >= 11; r.isRecent(i, d, int(end-start)) != want {
			t.Errorf("chunk %d among the recent ones: %v, want %v", i, !want, want)
		}
	}
}

// TestReadWaitsForOwnLoad: a read of a chunk the reader is loading ahead
// waits for that load, also after the cache's load has ended (a get then
// no longer joins it) and before the chunk took its recent slot: the
// interleaving that, under load, decoded a chunk twice.
func TestReadWaitsForOwnLoad(t *testing.T) {
	data := randBytes(8*testCS, 9)
	src, x := writeImage(t, data, testCS)
	cache, err := New(src, 1) // keeps nothing
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)
	r := NewReader(context.Background(), x, cache, 1)
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	r.loaded = func(i int) {
		if i == 1 && first.CompareAndSwap(false, true) { // the load ahead of chunk 1: pause before its recent slot
			close(held)
			<-release
		}
	}
	readCheck(t, r, data, 0, 4096)
	readCheck(t, r, data, 4096, 4096) // follows: loads chunk 1 ahead
	<-held
	collapsed := cache.Stats.Collapsed.Load()
	done := make(chan struct{})
	go func() {
		defer close(done)
		readCheck(t, r, data, testCS, 4096)
	}()
	for cache.Stats.Collapsed.Load() == collapsed {
		select {
		case <-done:
			close(release)
			t.Fatal("the read loaded chunk 1 again while the reader's own load of it was ending")
		default:
			runtime.Gosched()
		}
	}
	close(release)
	<-done
	waitPrefetches(r)
	if got := cache.Stats.DecodedBytes.Load(); got != 2*testCS {
		t.Errorf("decoded %d bytes, want chunks 0 and 1 once each (%d)", got, 2*testCS)
	}
}
