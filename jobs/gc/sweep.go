package gc

import (
	"context"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
)

// sweep is phase 2: the store's collector removes the chunks not marked
// and older than the cutoff (store.ChunkCollector.Sweep), on a pool of
// SweepWorkers, and its counts go into the report.
func (r *gcRun) sweep(ctx context.Context) error {
	opt := store.SweepOptions{Workers: r.sweepWorkers(), Missing: r.sweptMissing}
	if r.opt.Observer != nil {
		opt.Done = func(n int) { r.opt.Observer.AddDone(int64(n), 0) }
	}
	c, err := r.col.Sweep(ctx, opt)
	rep := &r.rep
	rep.ChunkFiles += c.Files
	rep.RemovedChunks += c.RemovedChunks
	rep.RemovedBytes += c.RemovedBytes
	rep.RemovedBad += c.RemovedBad
	rep.StillBad += c.StillBad
	rep.RemovedTemp += c.RemovedTemp
	rep.RestoredChunks += c.RestoredChunks
	rep.PendingChunks += c.PendingChunks
	rep.PendingBytes += c.PendingBytes
	rep.DiskChunks += c.DiskChunks
	rep.DiskBytes += c.DiskBytes
	rep.MissingChunks += c.MissingChunks
	if n := r.mc.missingLogged.Load() - maxMissingLogged; c.MissingChunks > 0 && n > 0 {
		r.logf("warning: %d more missing chunks not named", min(n, c.MissingChunks))
	}
	return err
}

// sweptMissing names (up to a bound) a referenced chunk the sweep found
// missing.
func (r *gcRun) sweptMissing(d chunk.Digest) {
	if r.mc.missingLogged.Add(1) <= maxMissingLogged {
		r.logf("warning: missing chunk %s, used by an index", d)
	}
}
