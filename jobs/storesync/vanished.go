package storesync

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnfs/cairn/store"
)

// removeVanished removes, oldest first, the target's finished snapshots
// of the planned groups (and, in namespace mode, of the target's other
// groups in the namespace tree) that the source does not have.
func (s *Syncer) removeVanished(ctx context.Context, plan []*groupPlan) error {
	groups := make(map[store.Group]*groupPlan, len(plan))
	for _, gp := range plan {
		groups[gp.g] = gp
	}
	targets := make([]*groupPlan, 0, len(plan))
	targets = append(targets, plan...)
	if s.opt.Group == nil {
		extra, err := s.targetOnlyGroups(groups)
		if err != nil {
			s.obs.Errorf("target: %v: vanished groups not removed", err)
		}
		targets = append(targets, extra...)
	}
	for _, gp := range targets {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.removeVanishedOf(ctx, gp)
	}
	return ctx.Err()
}

// targetOnlyGroups lists the target's groups in the selected namespace
// tree that the source has not (as empty plans: all their snapshots
// vanished).
func (s *Syncer) targetOnlyGroups(have map[store.Group]*groupPlan) ([]*groupPlan, error) {
	if !s.to.HasNamespace(s.opt.NS) {
		return nil, nil
	}
	nss, err := s.to.Namespaces(s.opt.NS)
	if err != nil {
		return nil, err
	}
	var out []*groupPlan
	for _, ns := range nss {
		gs, err := s.to.Groups(ns)
		if err != nil {
			return out, fmt.Errorf("namespace %q: %w", ns, err)
		}
		for _, g := range gs {
			if have[g] == nil {
				out = append(out, newGroupPlan(g))
			}
		}
	}
	return out, nil
}

// removeVanishedOf removes one group's vanished snapshots.
func (s *Syncer) removeVanishedOf(ctx context.Context, gp *groupPlan) {
	if err := s.to.CheckGroupDirs(gp.g); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.obs.Errorf("target: %v: vanished snapshots not removed", err)
		return
	}
	infos, err := s.to.Snapshots(gp.g)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err != nil {
		s.obs.Errorf("target: group %s: %v: vanished snapshots not removed", gp.g, err)
		return
	}
	for _, si := range infos {
		if !si.Finished || gp.all[si.Time.Unix()] {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		res := SnapshotResult{Snapshot: si.Snapshot.String(), Outcome: Removed}
		err := s.to.ForgetSnapshot(ctx, si.Snapshot)
		switch {
		case err == nil:
			s.obs.Logf("%s: vanished from the source, removed", si.Snapshot)
		case errors.Is(err, store.ErrProtected):
			res.Outcome = Protected
			s.obs.Logf("%s: vanished from the source, kept: it is protected", si.Snapshot)
		case errors.Is(err, store.ErrLocked):
			res.Outcome = InUse
			s.obs.Logf("%s: vanished from the source, kept: it is in use (%v)", si.Snapshot, err)
		case errors.Is(err, store.ErrNotFound):
			continue
		default:
			res.Outcome, res.Error = Failed, err.Error()
			s.obs.Errorf("%s: remove vanished: %v", si.Snapshot, err)
		}
		s.record(res)
	}
}
