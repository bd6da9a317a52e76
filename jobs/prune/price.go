package prune

import (
	"context"
	"fmt"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/usage"
)

// doom records a snapshot a dry run would remove.
func (p *pruner) doom(snap store.Snapshot) {
	p.mu.Lock() // groups are pruned one at a time; the lock is for Report
	defer p.mu.Unlock()
	if p.doomed == nil {
		p.doomed = map[string]bool{}
	}
	p.doomed[snap.String()] = true
}

// price says what a dry run's plan would free (Report.WouldFree): one
// pass over every index of the store (store/usage), made only when the
// plan removes something.
func (p *pruner) price(ctx context.Context, j *jobs.Job) error {
	_, local := p.s.ChunkDiskDir()
	f := &Freed{Snapshots: len(p.doomed), StoredKnown: local}
	if len(p.doomed) > 0 {
		j.SetPhase("pricing")
		rep, err := usage.Compute(ctx, p.s, usage.Options{Remove: func(s store.Snapshot) bool { return p.doomed[s.String()] }})
		if err != nil {
			return fmt.Errorf("what the plan would free: %w", err)
		}
		u := rep.Removed
		f.Chunks, f.Stored, f.Logical, f.FileBytes = u.Unique.Chunks, u.Unique.Stored, u.Unique.Logical, u.FileBytes
		f.StoredKnown = rep.StoredKnown
		for _, err := range rep.Errors {
			j.Logf("warning: %v", err)
		}
		if n := len(rep.Errors); n > 0 {
			f.Error = fmt.Sprintf("%d error(s) reading the store, the figures may be too high; the first: %v", n, rep.Errors[0])
		}
	}
	j.Logf("would free %d chunk(s), %d bytes stored (%d logical), and %d bytes of snapshot files",
		f.Chunks, f.Stored, f.Logical, f.FileBytes)
	p.mu.Lock()
	p.rep.WouldFree = f
	p.mu.Unlock()
	return nil
}
