package gc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sys/unix"
)

// markRange is how many index entries one phase-1 work item covers, so
// that one large index is shared by every worker.
const markRange = 1 << 14

// maxMarkEntries bounds the index entries of the indexes phase 1 holds
// open (mapped) at once, about 40 MiB of mapped index pages: many small
// indexes are marked side by side, a large one alone.
const maxMarkEntries = 1 << 20

// maxMissingLogged bounds the missing chunks named in the log.
const maxMissingLogged = 100

// markItem is a range of one index's entries to touch.
type markItem struct {
	idx    *openIndex
	lo, hi int
}

// openIndex is an index being marked; the worker finishing its last
// range closes it.
type openIndex struct {
	index.Index
	name    string // for messages
	weight  int64  // its share of maxMarkEntries
	pending atomic.Int64
}

// markCounts are phase 1's counters.
type markCounts struct {
	indexFiles, indexBytes atomic.Int64
	refs, touched, missing atomic.Int64
	missingLogged          atomic.Int64
}

// mark is phase 1: it touches the atime of every chunk any index of any
// snapshot (finished or not, of every namespace) references, skipping
// the digests the cache says it touched already. An index that cannot be
// read, or a touch failing otherwise than for a missing chunk, ends it
// with an error: the sweep must not run then. Missing chunks are counted
// and named in the log.
func (r *gcRun) mark(ctx context.Context) error {
	cache := newTouchedCache(r.cacheEntries())
	defer cache.free()
	r.inflight = semaphore.NewWeighted(maxMarkEntries)
	g, ctx := errgroup.WithContext(ctx)
	items := make(chan markItem, 2*r.markWorkers())
	g.Go(func() error {
		defer close(items)
		return r.listIndexes(ctx, items)
	})
	for range r.markWorkers() {
		g.Go(func() error {
			for it := range items {
				if err := r.markRange(ctx, cache, it); err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := g.Wait()
	for range items { // left by workers that stopped on an error
	}
	r.open.closeAll()
	return err
}

// openSet holds the indexes being marked, so that those a failed phase
// 1 leaves open are closed.
type openSet struct {
	mu sync.Mutex
	m  map[*openIndex]struct{}
}

func (o *openSet) add(x *openIndex) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[*openIndex]struct{}{}
	}
	o.m[x] = struct{}{}
}

// remove reports whether x was still open (and takes it out).
func (o *openSet) remove(x *openIndex) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.m[x]
	delete(o.m, x)
	return ok
}

func (o *openSet) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for x := range o.m {
		x.Close()
	}
	clear(o.m)
}

// listIndexes walks every snapshot and sends its indexes' ranges.
func (r *gcRun) listIndexes(ctx context.Context, items chan<- markItem) error {
	for si, err := range r.s.Walk(ctx, store.Selector{}) {
		if errors.Is(err, store.ErrNotFound) {
			continue // a group removed while walked
		}
		if errors.Is(err, unix.ENOTDIR) {
			r.logf("warning: passed over what is not a directory: %v", err) // no snapshots in it
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadIndex, err)
		}
		names, err := r.s.SnapshotIndexFiles(si.Snapshot)
		if errors.Is(err, store.ErrNotFound) {
			continue // forgotten meanwhile
		}
		if errors.Is(err, unix.ENOTDIR) {
			r.logf("warning: passed over snapshot %s: not a directory", si.Snapshot)
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadIndex, err)
		}
		for _, name := range names {
			if err := r.sendIndex(ctx, si.Snapshot, name, items); err != nil {
				return err
			}
		}
	}
	return nil
}

// sendIndex opens one index and sends its ranges.
func (r *gcRun) sendIndex(ctx context.Context, snap store.Snapshot, name string, items chan<- markItem) error {
	x, err := r.s.OpenIndexFile(snap, name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, store.ErrNotFound) {
		return nil // removed with its snapshot meanwhile
	}
	if err != nil {
		return fmt.Errorf("%w: snapshot %s: %w", ErrBadIndex, snap, err)
	}
	n := x.Len()
	idx := &openIndex{Index: x, name: snap.String() + "/" + name, weight: int64(min(max(n, 1), maxMarkEntries))}
	if err := r.inflight.Acquire(ctx, idx.weight); err != nil {
		x.Close()
		return err
	}
	r.open.add(idx)
	r.mc.indexFiles.Add(1)
	r.mc.indexBytes.Add(x.Size())
	if n == 0 {
		return r.closeIndex(idx)
	}
	idx.pending.Store(int64((n + markRange - 1) / markRange))
	for lo := 0; lo < n; lo += markRange {
		select {
		case items <- markItem{idx: idx, lo: lo, hi: min(lo+markRange, n)}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// closeIndex closes a marked index; a read fault while it was marked
// (the file shrank or failed) makes it unreadable.
func (r *gcRun) closeIndex(idx *openIndex) error {
	if !r.open.remove(idx) {
		return nil
	}
	ferr := idx.Err()
	idx.Close()
	r.inflight.Release(idx.weight)
	if r.opt.Observer != nil {
		r.opt.Observer.AddDone(1, 0)
	}
	if ferr != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadIndex, idx.name, ferr)
	}
	return nil
}

// markRange touches one range of an index's chunks.
func (r *gcRun) markRange(ctx context.Context, cache *touchedCache, it markItem) error {
	var refs, touched int64
	defer func() {
		r.mc.refs.Add(refs)
		r.mc.touched.Add(touched)
	}()
	for i := it.lo; i < it.hi; i++ {
		if i&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		d, _, _ := it.idx.Chunk(i)
		refs++
		if cache.has(d) {
			continue
		}
		err := r.col.MarkChunk(ctx, d)
		switch {
		case err == nil:
			touched++
		case errors.Is(err, store.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
			if err := r.missingChunk(d, it.idx.name); err != nil {
				return err
			}
		default:
			return fmt.Errorf("mark chunk %s of %s: %w", d, it.idx.name, err)
		}
		cache.add(d)
	}
	if it.idx.pending.Add(-1) == 0 {
		return r.closeIndex(it.idx)
	}
	return nil
}

// missingChunk counts and names (up to a bound) a referenced chunk that
// is not there, and keeps its .bad copies and any copy a killed sweep
// left aside.
func (r *gcRun) missingChunk(d chunk.Digest, index string) error {
	r.mc.missing.Add(1)
	kept, err := r.col.MarkMissing(d)
	if err != nil {
		return fmt.Errorf("mark chunk %s of %s: %w", d, index, err)
	}
	if r.mc.missingLogged.Add(1) <= maxMissingLogged {
		note := ""
		if kept {
			note = " (a .bad or set-aside copy of it is kept)"
		}
		r.logf("warning: missing chunk %s, used by %s%s", d, index, note)
	}
	return nil
}
