package chunkcache

import (
	"context"
	"math"

	"github.com/cairnfs/cairn/chunk"
)

// Read-ahead of an Reader. A reader whose reads follow each other
// has the next chunks loaded and decoded in the background; zero chunks
// (the holes of a sparse image) need no load and neither count against
// the window nor stop it, so the decoders work on the data that follows
// a hole while the reader is still streaming the hole.

const (
	// seqWindow is how far a read may land from the end of the previous
	// one and still count as sequential: the kernel's read-ahead sends
	// several requests at once, and they arrive in any order.
	// Random reads land that close too. Not loading ahead for reads of
	// less than 32 KiB that do not start where the last one ended was
	// tried: fio randread 4k of a 2 GiB image measured no better (the
	// chunks near a read are read soon), so they are not told apart.
	seqWindow = 8 << 20
	// prefetchScan bounds the index entries looked at past a read for
	// chunks to load ahead (zero chunks among them are skipped).
	prefetchScan = 64
	// streamRead is the smallest read that, following the last one,
	// makes its chunks (and those loaded ahead for it) a scan's, which a
	// reader that LimitScans caches only within the scan share: the
	// kernel's read-ahead for a dd or a cp asks for 128 KiB to 1 MiB at a
	// time, while a random reader that lands near its last read (fio
	// 4k, a VM's disk) comes back to the chunks it loads.
	streamRead = 64 << 10
)

// sequential notes a read of n bytes at off and reports whether it
// follows the previous read closely enough to load ahead for it.
func (r *Reader) sequential(off int64, n int) bool {
	prev := r.nextOff.Swap(off + int64(n))
	return prev >= 0 && off >= prev-seqWindow && off <= prev+seqWindow
}

// zeroChunk reports whether chunk d of size bytes is a zero chunk the
// cache serves without a load (a plain index's; an encrypted index names
// zero chunks by a keyed digest, which is loaded like any other).
func (r *Reader) zeroChunk(d chunk.Digest, size int) bool {
	return r.key == nil && r.c.IsZeroChunk(d, size)
}

// prefetch starts background loads of the chunks after i that are not
// zero chunks, up to readahead of them within prefetchScan entries, each
// at most once per reader, for a scan or not (see chunk). At most
// readahead loads run at a time.
func (r *Reader) prefetch(i int, scan bool) {
	if r.readahead <= 0 {
		return
	}
	a := int(r.ahead.Load())
	if a < i || a > i+prefetchScan {
		a = i // a seek: start a new window here
	}
	last := min(i+prefetchScan, r.idx.Len()-1)
	for j, data := i+1, 0; j <= last && data < r.readahead; j++ {
		d, start, end := r.idx.Chunk(j)
		if r.idx.Err() != nil {
			return // the read of chunk j will report it
		}
		size := int(end - start)
		if r.zeroChunk(d, size) {
			continue
		}
		data++
		if j <= a {
			continue // prefetched already
		}
		select {
		case r.slots <- struct{}{}:
		default:
			return // window busy; the next read will try again
		}
		r.ahead.Store(int64(j))
		a = j
		r.c.Stats.PrefetchLoads.Add(1)
		go func() {
			defer func() { <-r.slots }()
			if b, err := r.chunk(r.bg, j, d, size, scan); err == nil { // an error surfaces on the real read
				b.release()
			}
		}()
	}
}

// chunk returns chunk i (digest d, size bytes), read for a scan (a
// stream of sequential reads, streamRead) or not, with a reference the
// caller releases: a zero chunk from the cache's zero buffer, another
// from the reader's recent chunks or through the cache; a loaded one is
// kept among the recent ones (with a reference of its own).
func (r *Reader) chunk(ctx context.Context, i int, d chunk.Digest, size int, scan bool) (*chunkBuf, error) {
	if r.zeroChunk(d, size) {
		return r.c.get(ctx, nil, d, size, false)
	}
	for {
		if b := r.recentHit(i, d, size); b != nil {
			return b, nil
		}
		r.lmu.Lock()
		wait, busy := r.loading[d]
		if !busy {
			done := make(chan struct{})
			r.loading[d] = done
			r.lmu.Unlock()
			b, err := r.load(ctx, i, d, size, scan)
			r.lmu.Lock()
			delete(r.loading, d)
			r.lmu.Unlock()
			close(done)
			return b, err
		}
		r.lmu.Unlock()
		r.c.Stats.Collapsed.Add(1)
		select { // this reader is loading d: take it from the recent ones once kept
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// recentHit returns chunk i (digest d, size bytes) from the recent ones
// with a reference for the caller, or nil.
func (r *Reader) recentHit(i int, d chunk.Digest, size int) *chunkBuf {
	for k := range r.recent {
		if rc := r.recent[k].Load(); rc != nil && rc.holds(i, d, size) && rc.b.acquire() {
			r.c.Stats.Hits.Add(1)
			return rc.b
		}
	}
	return nil
}

// load gets chunk i through the cache and keeps it among the recent
// ones. The reader loads a digest once at a time (chunk): between the
// end of the cache's load, when a get no longer joins it, and the chunk
// taking its recent slot, a read of it would load it again.
func (r *Reader) load(ctx context.Context, i int, d chunk.Digest, size int, scan bool) (*chunkBuf, error) {
	b, err := r.c.get(ctx, r.key, d, size, scan && r.scanLimited)
	if r.loaded != nil {
		r.loaded(i) // a test's pause point
	}
	if err == nil && !r.isRecent(i, d, size) {
		b.acquire() // the recent slot's: never fails, the caller's is held
		r.keepRecent(&recentChunk{i: i, d: d, b: b})
	}
	return b, err
}

// keepRecent puts rc among the recent chunks in the place of the one
// least likely to be read next: an empty slot, else the chunk farthest
// behind the last read, else (all at or ahead of it) the one farthest
// ahead. Taking the slots in turn pushed out chunks loaded ahead before
// they were read (loads finish in any order, and reads that load a
// chunk themselves take slots too): a cold read of 512 MiB from a bucket
// at 20 ms loaded 70 of its 128 chunks twice.
func (r *Reader) keepRecent(rc *recentChunk) {
	for {
		k, old := r.victim(int(r.hint.Load()))
		if r.recent[k].CompareAndSwap(old, rc) {
			if old != nil {
				old.b.release()
			}
			return
		}
	}
}

// victim returns the recent slot to replace when the last read was in
// chunk cur, and what it holds.
func (r *Reader) victim(cur int) (int, *recentChunk) {
	best, bestScore := 0, math.MinInt
	var bestOld *recentChunk
	for k := range r.recent {
		rc := r.recent[k].Load()
		if rc == nil {
			return k, nil
		}
		score := cur - rc.i // behind: the farther, the sooner out
		if rc.i >= cur {
			score = rc.i - cur - math.MaxInt32 // ahead: after every one behind
		}
		if score > bestScore {
			best, bestScore, bestOld = k, score, rc
		}
	}
	return best, bestOld
}

// isRecent reports whether chunk i (digest d, size bytes) is among the
// recent ones.
func (r *Reader) isRecent(i int, d chunk.Digest, size int) bool {
	for k := range r.recent {
		if rc := r.recent[k].Load(); rc != nil && rc.holds(i, d, size) {
			return true
		}
	}
	return false
}

// Close gives back the chunks the reader keeps, so that their buffers
// can be recycled. The reader still works (it keeps chunks again).
func (r *Reader) Close() {
	for k := range r.recent {
		if old := r.recent[k].Swap(nil); old != nil {
			old.b.release()
		}
	}
}
