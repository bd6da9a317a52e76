package chunkcache

import "testing"

// TestScanBytesBound: in a big cache the chunks of a scan (a reader
// that LimitScans, read sequentially) take at most four buffers
// (maxScanBytes), not 1/8 of the cache, so that a scan streams through
// recycled buffers instead of taking a new one for each chunk it leaves
// cached; the bytes read are right all along.
func TestScanBytesBound(t *testing.T) {
	const cs = 4 << 20
	data := randBytes(12*cs, 21)
	r, c := bigChunkImage(t, data, 1<<30) // 1/8: 128 MiB, all 12 chunks
	r.readahead = 2
	r.slots = make(chan struct{}, 2)
	r.LimitScans()
	peak := int64(0)
	for off := 0; off < len(data); off += 1 << 20 {
		readCheck(t, r, data, int64(off), 1<<20)
		peak = max(peak, c.scanned.Load())
	}
	waitPrefetches(r)
	peak = max(peak, c.scanned.Load())
	if peak > 4*bufClass {
		t.Errorf("scan chunks held %d bytes of the cache, more than 4 buffers", peak)
	}
	if peak == 0 {
		t.Error("no scan chunk was cached")
	}
	r.Close()
}

// TestSmallReadsNotScan: small reads that land near the last one (fio
// 4k, a VM's disk) load ahead but are no scan: every chunk they load is
// cached, and reading them again misses none.
func TestSmallReadsNotScan(t *testing.T) {
	const cs = 4 << 20
	data := randBytes(8*cs, 22)
	r, c := bigChunkImage(t, data, 1<<30)
	r.readahead = 2
	r.slots = make(chan struct{}, 2)
	r.LimitScans()
	for i := range 8 {
		readCheck(t, r, data, int64(i*cs+4096*i), 4096)
	}
	waitPrefetches(r)
	if n := c.scanned.Load(); n != 0 {
		t.Errorf("small reads cached %d bytes as a scan's", n)
	}
	r.Close()
	misses := c.Stats.Misses.Load()
	r.nextOff.Store(-1)
	for i := range 8 {
		readCheck(t, r, data, int64(i*cs+11), 4096)
		r.nextOff.Store(-1) // random reads: no read-ahead
	}
	if again := c.Stats.Misses.Load() - misses; again != 0 {
		t.Errorf("%d of 8 chunks read by small reads missed when read again", again)
	}
}
