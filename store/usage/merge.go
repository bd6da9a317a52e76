package usage

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sync/errgroup"
)

// entry is what the pass keeps of one distinct chunk (24 bytes).
type entry struct {
	snap      int32 // first snapshot (index into Report.Snapshots)
	group     int32 // first group (index into Report.Groups)
	lastGroup int32 // last group whose total counted it
	logical   uint32
	stored    uint32
	flags     uint8
}

const (
	sharedSnap  uint8 = 1 << iota // referenced by another snapshot than snap
	sharedGroup                   // referenced by another group than group
	inRemove                      // referenced by a snapshot of Options.Remove
	outRemove                     // referenced by a snapshot not in it
	missing                       // no chunk file
)

// maxStatErrors bounds the stat errors (other than a missing chunk)
// reported one by one.
const maxStatErrors = 10

// merger is the pass: one goroutine (run's caller) merges the workers'
// batches in walk order, so groups arrive whole and a group's total
// counts a chunk once (lastGroup).
type merger struct {
	s   *store.Store
	opt Options
	rep *Report

	index map[chunk.Digest]int32
	ents  []entry

	idxs       []int32 // the current batch's entries
	firstGroup []bool  // whether the batch's group counts the entry now
	fresh      []fresh // entries the current batch made: to stat
	statErrs   int
}

// run walks the store with a pool of readers and merges what they read.
func (m *merger) run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	type job struct {
		si   store.SnapshotInfo
		slot chan batch
	}
	jobs := make(chan job)
	ordered := make(chan chan batch, 2*m.opt.Workers)
	g.Go(func() error {
		defer close(jobs)
		defer close(ordered)
		for si, err := range m.s.Walk(ctx, store.Selector{}) {
			slot := make(chan batch, 1)
			if err != nil {
				slot <- batch{walkErr: err}
			}
			select {
			case ordered <- slot:
			case <-ctx.Done():
				return ctx.Err()
			}
			if err != nil {
				continue
			}
			select {
			case jobs <- job{si, slot}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return ctx.Err()
	})
	for range m.opt.Workers {
		g.Go(func() error {
			for j := range jobs {
				j.slot <- readSnapshot(ctx, m.s, j.si)
			}
			return nil
		})
	}
	g.Go(func() error {
		for slot := range ordered {
			select {
			case b := <-slot:
				m.merge(b)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	return g.Wait()
}

// merge adds one snapshot's chunks.
func (m *merger) merge(b batch) {
	switch {
	case b.walkErr != nil:
		m.walkErr(b.walkErr)
		return
	case b.gone:
		return
	}
	rep := m.rep
	si := int32(len(rep.Snapshots))
	rep.Snapshots = append(rep.Snapshots, Snapshot{SnapshotInfo: b.info, Err: b.err,
		Usage: Usage{Files: b.files, FileBytes: b.fileBytes}})
	if b.err != nil {
		rep.Errors = append(rep.Errors, b.err)
	}
	if n := len(rep.Groups); n == 0 || rep.Groups[n-1].Group != b.info.Group {
		rep.Groups = append(rep.Groups, Group{Group: b.info.Group})
	}
	gi := int32(len(rep.Groups) - 1)
	grp := &rep.Groups[gi]
	grp.Snapshots++
	grp.Files += b.files
	grp.FileBytes += b.fileBytes
	side := outRemove
	if m.opt.Remove != nil && m.opt.Remove(b.info.Snapshot) {
		side = inRemove
		rep.Removed.Files += b.files
		rep.Removed.FileBytes += b.fileBytes
	}
	m.lookup(b.refs, si, gi, side)
	m.statFresh()
	snap := &rep.Snapshots[si]
	for i, x := range m.idxs {
		e := &m.ents[x]
		snap.Total.add(e)
		if m.firstGroup[i] {
			grp.Total.add(e)
		}
	}
}

// lookup finds or makes the entries of refs for snapshot si of group gi
// (side: inRemove or outRemove), filling m.idxs, m.firstGroup, m.fresh.
func (m *merger) lookup(refs []ref, si, gi int32, side uint8) {
	m.idxs, m.firstGroup, m.fresh = m.idxs[:0], m.firstGroup[:0], m.fresh[:0]
	for _, r := range refs {
		x, ok := m.index[r.d]
		if !ok {
			x = int32(len(m.ents))
			m.index[r.d] = x
			m.ents = append(m.ents, entry{snap: si, group: gi, lastGroup: gi, logical: r.size, flags: side})
			m.fresh = append(m.fresh, fresh{x, r.d})
			m.idxs, m.firstGroup = append(m.idxs, x), append(m.firstGroup, true)
			continue
		}
		e := &m.ents[x]
		e.flags |= side
		if e.snap != si {
			e.flags |= sharedSnap
		}
		if e.group != gi {
			e.flags |= sharedGroup
		}
		first := e.lastGroup != gi
		e.lastGroup = gi
		m.idxs, m.firstGroup = append(m.idxs, x), append(m.firstGroup, first)
	}
}

// statFresh reads the stored size of the entries the batch made, a few
// at a time (nothing where sizes are not known cheaply).
func (m *merger) statFresh() {
	if !m.rep.StoredKnown || len(m.fresh) == 0 {
		return
	}
	workers := min(m.opt.Workers, 1+len(m.fresh)/64)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(m.fresh); i += workers {
				m.statOne(m.fresh[i], &mu)
			}
		})
	}
	wg.Wait()
}

// fresh is an entry made by the current batch and its digest.
type fresh struct {
	x int32
	d chunk.Digest
}

// statOne reads one chunk's stored size; a chunk that cannot be
// stat'ed counts as missing (an error other than its absence is
// reported, up to maxStatErrors).
func (m *merger) statOne(f fresh, mu *sync.Mutex) {
	e := &m.ents[f.x]
	ci, err := m.s.StatChunk(f.d)
	if err == nil {
		e.stored = uint32(max(0, min(ci.Size, chunk.MaxBlobSize)))
		return
	}
	e.flags |= missing
	if errors.Is(err, store.ErrMissingChunk) {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if m.statErrs++; m.statErrs <= maxStatErrors {
		m.rep.Errors = append(m.rep.Errors, fmt.Errorf("chunk size: %w", err))
	}
}

// finish sums the entries into the snapshots, groups and the store.
func (m *merger) finish() {
	rep := m.rep
	for i := range m.ents {
		e := &m.ents[i]
		rep.All.Total.add(e)
		if e.flags&sharedSnap == 0 {
			rep.All.Unique.add(e)
			rep.Snapshots[e.snap].Unique.add(e)
		}
		if e.flags&sharedGroup == 0 {
			rep.Groups[e.group].Unique.add(e)
		}
		if e.flags&inRemove != 0 {
			rep.Removed.Total.add(e)
			if e.flags&outRemove == 0 {
				rep.Removed.Unique.add(e)
			}
		}
		if e.flags&missing != 0 {
			rep.Missing++
		}
	}
	for _, s := range rep.Snapshots {
		rep.All.Files += s.Files
		rep.All.FileBytes += s.FileBytes
	}
	if m.statErrs > maxStatErrors {
		rep.Errors = append(rep.Errors, fmt.Errorf("chunk size: %d more chunk(s) could not be stat'ed", m.statErrs-maxStatErrors))
	}
}
