package jobs

import (
	"context"

	"github.com/cairnfs/cairn/store"
)

// SelectSnapshots lists the finished snapshots sel names, in Walk's
// order, for a kind that works on snapshots. What cannot be listed or
// resolved is recorded as the job's error; unfinished snapshots found in
// the namespace tree are logged as not done ("not " + verb) and left out.
// Only a done ctx ends it early, with ctx's error.
func (j *Job) SelectSnapshots(ctx context.Context, s *store.Store, sel store.Selector, verb string) ([]store.Snapshot, error) {
	var out []store.Snapshot
	for si, err := range s.Walk(ctx, sel) {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			j.Errorf("%v", err)
		case !si.Finished:
			j.Logf("%s: unfinished (no manifest), not %s", si.Snapshot, verb)
		default:
			out = append(out, si.Snapshot)
		}
	}
	return out, nil
}
