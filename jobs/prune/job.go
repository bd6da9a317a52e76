package prune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// Kind is the prune job: it plans each selected group by the keep
// options and removes the snapshots marked remove.
type Kind struct {
	// Location is the time zone periods are taken in (nil: time.Local).
	Location *time.Location
	// beforeForget, when set (by tests), runs before each removal: the
	// moment another process may protect, lock or remove the snapshot.
	beforeForget func(store.Snapshot)
}

var (
	_ jobs.Kind     = Kind{}
	_ jobs.Work     = (*pruner)(nil)
	_ jobs.Reporter = (*pruner)(nil)
)

// Name implements jobs.Kind.
func (Kind) Name() string { return "prune" }

// New implements jobs.Kind.
func (k Kind) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	o, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	loc := k.Location
	if loc == nil {
		loc = time.Local
	}
	p := &pruner{s: s, opt: o, loc: loc, beforeForget: k.beforeForget}
	p.rep = Report{DryRun: o.DryRun, Options: o.Options.String(), Snapshots: []SnapshotResult{}}
	return p, nil
}

// pruner is one prune job's work.
type pruner struct {
	s   *store.Store
	opt JobOptions
	loc *time.Location

	beforeForget func(store.Snapshot)

	mu  sync.Mutex
	rep Report
	// doomed are the snapshots a dry run would remove (WouldFree).
	doomed map[string]bool
}

// Report implements jobs.Reporter.
func (p *pruner) Report() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rep.clone()
}

// Run implements jobs.Work.
func (p *pruner) Run(ctx context.Context, j *jobs.Job) error {
	defer j.SetPhase("done")
	j.SetPhase("listing")
	groups, err := p.groups()
	if err != nil {
		return err
	}
	j.SetTotals(int64(len(groups)), 0)
	dry := ""
	if p.opt.DryRun {
		dry = " (dry run: nothing is removed)"
	}
	zone, _ := time.Now().In(p.loc).Zone()
	j.Logf("pruning %s, %d group(s), periods in time zone %s (%s), %s%s",
		p.opt.describe(), len(groups), p.loc, zone, p.opt.Options, dry)
	j.SetPhase("pruning")
	for _, g := range groups {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.pruneGroup(ctx, j, g)
		j.AddDone(1, 0)
	}
	if p.opt.DryRun && ctx.Err() == nil {
		return p.price(ctx, j)
	}
	return ctx.Err()
}

// groups lists the groups the job prunes.
func (p *pruner) groups() ([]store.Group, error) {
	if !p.opt.All {
		if err := p.opt.Group.Check(); err != nil {
			return nil, err
		}
		return []store.Group{p.opt.Group}, nil
	}
	if !p.s.HasNamespace(p.opt.NS) {
		return nil, fmt.Errorf("namespace %q: %w", p.opt.NS, store.ErrNotFound)
	}
	nss, err := p.s.Namespaces(p.opt.NS)
	if err != nil {
		return nil, err
	}
	var out []store.Group
	for _, ns := range nss {
		gs, err := p.s.Groups(ns)
		if err != nil {
			return nil, fmt.Errorf("namespace %q: %w", ns, err)
		}
		out = append(out, gs...)
	}
	return out, nil
}

// pruneGroup plans one group and applies the plan, oldest first. What
// cannot be listed or removed is recorded as the job's error; a
// snapshot found locked or protected is skipped with a log line.
func (p *pruner) pruneGroup(ctx context.Context, j *jobs.Job, g store.Group) {
	if err := p.s.CheckGroupDirs(g); err != nil {
		j.Errorf("%v: not pruned", err)
		return
	}
	infos, err := p.s.Snapshots(g)
	if err != nil {
		j.Errorf("group %s: %v", g, err)
		return
	}
	snaps := make([]Snapshot, len(infos))
	for i, si := range infos {
		snaps[i] = Snapshot{Time: si.Time, Finished: si.Finished, Protected: si.Protected}
	}
	plan, err := Plan(snaps, p.opt.Options, p.loc)
	if err != nil {
		j.Errorf("group %s: %v", g, err)
		return
	}
	p.mu.Lock()
	p.rep.Groups++
	p.mu.Unlock()
	j.Logf("group %s: %d snapshot(s)", g, len(plan))
	for _, d := range slices.Backward(plan) {
		if ctx.Err() != nil {
			return // cancelled: what is left stays, unreported
		}
		res := p.apply(ctx, j, store.Snapshot{Group: g, Time: d.Time}, d)
		p.mu.Lock()
		p.rep.add(res)
		p.mu.Unlock()
	}
}

// apply carries out one decision.
func (p *pruner) apply(ctx context.Context, j *jobs.Job, snap store.Snapshot, d Decision) SnapshotResult {
	res := SnapshotResult{Snapshot: snap.String(), Mark: d.Mark, Rule: d.Rule, Finished: d.Finished}
	if d.Mark != Remove || p.opt.DryRun {
		would := ""
		if p.opt.DryRun {
			would = "would "
		}
		if p.opt.DryRun && d.Mark == Remove {
			p.doom(snap)
		}
		j.Logf("%s%s %s", would, d.Mark, snap)
		return res
	}
	if p.beforeForget != nil {
		p.beforeForget(snap)
	}
	err := p.s.ForgetSnapshot(ctx, snap)
	switch {
	case err == nil:
		res.Removed = true
		j.Logf("remove %s: removed", snap)
	case errors.Is(err, store.ErrLocked):
		res.Skipped = "locked"
		j.Logf("remove %s: skipped, it is in use (%v)", snap, err)
	case errors.Is(err, store.ErrProtected):
		res.Skipped = "protected"
		j.Logf("remove %s: skipped, it was protected meanwhile", snap)
	case errors.Is(err, store.ErrNotFound):
		res.Skipped = "gone"
		j.Logf("remove %s: skipped, it was removed meanwhile", snap)
	default:
		res.Error = err.Error()
		j.Errorf("remove %s: %v", snap, err)
	}
	return res
}
