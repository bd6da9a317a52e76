package gc

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/store"
	"golang.org/x/sync/errgroup"
)

// sweepCounts are phase 2's counters, kept per worker and summed.
type sweepCounts struct {
	files                       int64
	removedChunks, removedBytes int64
	removedBad, stillBad        int64
	removedTemp, restoredChunks int64
	pendingChunks, pendingBytes int64
	diskChunks, diskBytes       int64
}

func (c *sweepCounts) addTo(rep *Report) {
	rep.ChunkFiles += c.files
	rep.RemovedChunks += c.removedChunks
	rep.RemovedBytes += c.removedBytes
	rep.RemovedBad += c.removedBad
	rep.StillBad += c.stillBad
	rep.RemovedTemp += c.removedTemp
	rep.RestoredChunks += c.restoredChunks
	rep.PendingChunks += c.pendingChunks
	rep.PendingBytes += c.pendingBytes
	rep.DiskChunks += c.diskChunks
	rep.DiskBytes += c.diskBytes
}

// sweep is phase 2: every prefix directory is listed, on a pool of
// workers each taking the next directory, and the files older than the
// cutoff are removed (store.PrefixDir's conditional removals).
func (r *gcRun) sweep(ctx context.Context, cut, phase1 time.Time) error {
	chunks, err := r.s.OpenChunkDir()
	if err != nil {
		return err
	}
	defer chunks.Close()
	var next atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	for range r.sweepWorkers() {
		g.Go(func() error {
			var c sweepCounts
			defer func() {
				r.mu.Lock()
				c.addTo(&r.rep)
				r.mu.Unlock()
			}()
			var buf []store.ChunkEntry
			for {
				i := int(next.Add(1) - 1)
				if i >= store.PrefixDirs {
					return nil
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				var err error
				if buf, err = r.sweepDir(chunks, i, buf[:0], cut, phase1, &c); err != nil {
					return err
				}
				if r.opt.Observer != nil {
					r.opt.Observer.AddDone(1, 0)
				}
			}
		})
	}
	return g.Wait()
}

// sweepDir sweeps one prefix directory; buf is reused for its listing.
func (r *gcRun) sweepDir(chunks *store.ChunkDir, i int, buf []store.ChunkEntry, cut, phase1 time.Time, c *sweepCounts) ([]store.ChunkEntry, error) {
	d, err := chunks.Prefix(i)
	if errors.Is(err, store.ErrNotFound) {
		return buf, nil // not made yet (a lazily created store)
	}
	if err != nil {
		return buf, err
	}
	defer d.Close()
	buf, err = d.List(buf)
	if err != nil {
		return buf, err
	}
	// leftovers of a killed sweep first: one put back is a chunk again
	slices.SortFunc(buf, func(a, b store.ChunkEntry) int {
		return boolInt(b.Kind == store.EntryAside) - boolInt(a.Kind == store.EntryAside)
	})
	for _, e := range buf {
		if err := r.sweepEntry(d, e, cut, phase1, c); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sweepEntry decides one file, counting as PBS's sweep does: removed,
// pending (not marked by this GC, but newer than the cutoff) or on disk.
func (r *gcRun) sweepEntry(d *store.PrefixDir, e store.ChunkEntry, cut, phase1 time.Time, c *sweepCounts) error {
	c.files++
	switch e.Kind {
	case store.EntryTemp:
		ok, err := d.RemoveTemp(e, cut)
		if ok {
			c.removedTemp++
			c.removedBytes += e.Size
		}
		return err
	case store.EntryAside:
		res, size, err := d.RecoverAside(e, cut)
		switch res {
		case store.Removed, store.KeptReplaced:
			c.removedTemp++
			c.removedBytes += size
		case store.KeptTouched:
			c.restoredChunks++
			e.Kind = e.TargetKind()
			c.keep(e, phase1)
		}
		return err
	}
	if !e.Atime.Before(cut) {
		c.keep(e, phase1)
		return nil
	}
	res, size, err := d.RemoveIfOlder(e, cut)
	switch res {
	case store.Removed:
		if e.Kind == store.EntryBad {
			c.removedBad++
		} else {
			c.removedChunks++
		}
		c.removedBytes += size
	case store.KeptTouched, store.KeptReplaced, store.Busy:
		c.keep(e, phase1)
	}
	return err
}

// keep counts a file that stays.
func (c *sweepCounts) keep(e store.ChunkEntry, phase1 time.Time) {
	bad := e.Kind == store.EntryBad
	if bad {
		c.stillBad++
	}
	if e.Atime.Before(phase1) {
		if !bad {
			c.pendingChunks++
		}
		c.pendingBytes += e.Size
		return
	}
	if !bad {
		c.diskChunks++
	}
	c.diskBytes += e.Size
}
