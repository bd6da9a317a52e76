package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Sweep implements ChunkCollector: every prefix directory is listed, on
// a pool of workers each taking the next directory, and the files older
// than the cutoff are removed (PrefixDir's conditional removals).
func (c *localCollector) Sweep(ctx context.Context, opt SweepOptions) (SweepCounts, error) {
	var total SweepCounts
	chunks, err := c.s.OpenChunkDir()
	if err != nil {
		return total, err
	}
	defer chunks.Close()
	var mu sync.Mutex
	var next atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	for range max(opt.Workers, 1) {
		g.Go(func() error {
			var n SweepCounts
			defer func() {
				mu.Lock()
				total.Add(n)
				mu.Unlock()
			}()
			var buf []ChunkEntry
			for {
				i := int(next.Add(1) - 1)
				if i >= PrefixDirs {
					return nil
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				var err error
				if buf, err = c.sweepDir(chunks, i, buf[:0], &n); err != nil {
					return err
				}
				if opt.Done != nil {
					opt.Done(1)
				}
			}
		})
	}
	err = g.Wait()
	return total, err
}

// sweepDir sweeps one prefix directory; buf is reused for its listing.
func (c *localCollector) sweepDir(chunks *ChunkDir, i int, buf []ChunkEntry, n *SweepCounts) ([]ChunkEntry, error) {
	d, err := chunks.Prefix(i)
	if errors.Is(err, ErrNotFound) {
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
	slices.SortFunc(buf, func(a, b ChunkEntry) int {
		return boolInt(b.Kind == EntryAside) - boolInt(a.Kind == EntryAside)
	})
	for _, e := range buf {
		if err := sweepEntry(d, e, c.start.Cutoff, c.start.Phase1, n); err != nil {
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
func sweepEntry(d *PrefixDir, e ChunkEntry, cut, phase1 time.Time, c *SweepCounts) error {
	c.Files++
	switch e.Kind {
	case EntryTemp:
		ok, err := d.RemoveTemp(e, cut)
		if ok {
			c.RemovedTemp++
			c.RemovedBytes += e.Size
		}
		return err
	case EntryAside:
		res, size, err := d.RecoverAside(e, cut)
		switch res {
		case Removed, KeptReplaced:
			c.RemovedTemp++
			c.RemovedBytes += size
		case KeptTouched:
			c.RestoredChunks++
			e.Kind = e.TargetKind()
			c.Keep(e.Kind == EntryBad, e.Size, e.Atime, phase1)
		}
		return err
	}
	if !e.Atime.Before(cut) {
		c.Keep(e.Kind == EntryBad, e.Size, e.Atime, phase1)
		return nil
	}
	res, size, err := d.RemoveIfOlder(e, cut)
	switch res {
	case Removed:
		if e.Kind == EntryBad {
			c.RemovedBad++
		} else {
			c.RemovedChunks++
		}
		c.RemovedBytes += size
	case KeptTouched, KeptReplaced, Busy:
		c.Keep(e.Kind == EntryBad, e.Size, e.Atime, phase1)
	}
	return err
}

// Keep counts a file (a chunk, or a .bad copy when bad) that stays: one
// last used before the mark started is pending.
func (c *SweepCounts) Keep(bad bool, size int64, used, phase1 time.Time) {
	if bad {
		c.StillBad++
	}
	if used.Before(phase1) {
		if !bad {
			c.PendingChunks++
		}
		c.PendingBytes += size
		return
	}
	if !bad {
		c.DiskChunks++
	}
	c.DiskBytes += size
}
