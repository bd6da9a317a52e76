package store

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
