package storesync

import (
	"context"
	"fmt"

	"github.com/cairnfs/cairn/store"
)

// groupPlan is one group of the source: the finished snapshots to copy,
// oldest first, and the times of all its snapshot directories (finished
// or not: one being written has not vanished).
type groupPlan struct {
	g     store.Group
	snaps []store.Snapshot
	all   map[int64]bool
}

func newGroupPlan(g store.Group) *groupPlan {
	return &groupPlan{g: g, all: map[int64]bool{}}
}

func (gp *groupPlan) add(si store.SnapshotInfo) {
	gp.all[si.Time.Unix()] = true
	if si.Finished {
		gp.snaps = append(gp.snaps, si.Snapshot)
	}
}

// plan lists what the options select in the source, group by group.
// complete is false when part of the source could not be listed (an
// error was reported): then nothing is taken for vanished.
func (s *Syncer) plan(ctx context.Context) (plan []*groupPlan, complete bool, err error) {
	switch {
	case s.opt.Snapshot != nil:
		for si, err := range s.from.Walk(ctx, store.Selector{Refs: []store.Ref{*s.opt.Snapshot}}) {
			if err != nil {
				return nil, false, fmt.Errorf("source: %w", err)
			}
			gp := newGroupPlan(si.Group)
			gp.add(si)
			plan = append(plan, gp)
		}
		return plan, false, nil
	case s.opt.Group != nil:
		if err := s.from.CheckGroupDirs(*s.opt.Group); err != nil {
			return nil, false, fmt.Errorf("source: %w", err)
		}
		infos, err := s.from.Snapshots(*s.opt.Group)
		if err != nil {
			return nil, false, fmt.Errorf("source: %w", err)
		}
		gp := newGroupPlan(*s.opt.Group)
		for _, si := range infos {
			gp.add(si)
		}
		return []*groupPlan{gp}, true, nil
	}
	if !s.from.HasNamespace(s.opt.NS) {
		return nil, false, fmt.Errorf("source: namespace %q: %w", s.opt.NS, store.ErrNotFound)
	}
	complete = true
	var cur *groupPlan
	for si, err := range s.from.Walk(ctx, store.Selector{NS: s.opt.NS}) {
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, ctx.Err()
			}
			s.obs.Errorf("source: %v", err)
			complete = false
			continue
		}
		if cur == nil || cur.g != si.Group {
			cur = newGroupPlan(si.Group)
			plan = append(plan, cur)
		}
		cur.add(si)
	}
	return plan, complete, nil
}
