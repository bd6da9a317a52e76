package tape

import (
	"context"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// selectForTape lists the finished snapshots to export, named as on
// tape: the explicit ones in the order given, then those of the groups
// named, or, with neither, those of the namespace tree with groups sorted
// and snapshots oldest first (as PBS writes them, so later snapshots
// find their shared chunks on tape already). LatestOnly keeps only each
// group's newest.
func selectForTape(ctx context.Context, j *jobs.Job, s *store.Store, o ExportJobOptions) ([]string, error) {
	var snaps []store.Snapshot
	if len(o.Refs) > 0 || len(o.Groups) == 0 {
		all, err := j.SelectSnapshots(ctx, s, o.Selector, "exported")
		if err != nil {
			return nil, err
		}
		if o.LatestOnly && len(o.Refs) == 0 {
			all = newestOfEach(all)
		}
		snaps = all
	}
	for _, g := range o.Groups {
		of, err := groupSnapshots(ctx, j, s, g)
		if err != nil {
			return nil, err
		}
		if o.LatestOnly && len(of) > 0 {
			of = of[len(of)-1:]
		}
		snaps = append(snaps, of...)
	}
	out := make([]string, 0, len(snaps))
	seen := make(map[store.Snapshot]bool, len(snaps))
	for _, snap := range snaps {
		if seen[snap] {
			continue
		}
		seen[snap] = true
		if len(o.Refs) > 0 || len(o.Groups) > 0 {
			if _, err := s.ReadManifest(snap); err != nil {
				j.Errorf("snapshot %s: %v", snap, err)
				continue
			}
		}
		out = append(out, snap.String())
	}
	return out, nil
}

// groupSnapshots lists a group's finished snapshots, oldest first; a
// group that cannot be listed is an error of the job, not the end of it.
func groupSnapshots(ctx context.Context, j *jobs.Job, s *store.Store, g store.Group) ([]store.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	infos, err := s.Snapshots(g)
	if err != nil {
		j.Errorf("group %s: %v", g, err)
		return nil, nil
	}
	var out []store.Snapshot
	for _, si := range infos {
		if !si.Finished {
			j.Logf("%s: unfinished (no manifest), not exported", si.Snapshot)
			continue
		}
		out = append(out, si.Snapshot)
	}
	if len(out) == 0 {
		j.Errorf("group %s: no finished snapshot", g)
	}
	return out, nil
}

// newestOfEach keeps the last snapshot of each run of one group (Walk
// yields a group's snapshots together, oldest first).
func newestOfEach(snaps []store.Snapshot) []store.Snapshot {
	var out []store.Snapshot
	for i, snap := range snaps {
		if i+1 < len(snaps) && snaps[i+1].Group == snap.Group {
			continue
		}
		out = append(out, snap)
	}
	return out
}
