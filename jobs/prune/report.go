package prune

import "slices"

// MaxReported bounds the snapshots a job's report lists; the others are
// counted in SnapshotsOmitted (the log and the counts still have them).
const MaxReported = 100_000

// Report is the result of a prune job.
type Report struct {
	DryRun  bool   `json:"dry_run"`
	Options string `json:"options"`
	// Groups is the number of groups planned.
	Groups int `json:"groups"`
	// Marks counts the plan's marks.
	Marks Counts `json:"marks"`
	// Removed, Skipped and Failed count what became of the snapshots
	// marked remove (all 0 in a dry run).
	Removed int `json:"removed"`
	Skipped int `json:"skipped"`
	Failed  int `json:"failed"`
	// Snapshots lists each snapshot planned, group by group, oldest
	// first within a group (the order they are removed in).
	Snapshots        []SnapshotResult `json:"snapshots"`
	SnapshotsOmitted int              `json:"snapshots_omitted"`
}

// SnapshotResult is one snapshot's mark and what became of it.
type SnapshotResult struct {
	Snapshot string `json:"snapshot"`
	Mark     Mark   `json:"mark"`
	Finished bool   `json:"finished"`
	// Removed: the snapshot was removed.
	Removed bool `json:"removed"`
	// Skipped says why a snapshot marked remove was left in place: it
	// was locked (in use) or protected when its turn came.
	Skipped string `json:"skipped,omitempty"`
	// Error is why removing it failed.
	Error string `json:"error,omitempty"`
}

// add records one snapshot's result.
func (r *Report) add(res SnapshotResult) {
	r.Marks.Add(res.Mark)
	switch {
	case res.Removed:
		r.Removed++
	case res.Skipped != "":
		r.Skipped++
	case res.Error != "":
		r.Failed++
	}
	if len(r.Snapshots) >= MaxReported {
		r.SnapshotsOmitted++
		return
	}
	r.Snapshots = append(r.Snapshots, res)
}

func (r Report) clone() Report {
	r.Snapshots = slices.Clone(r.Snapshots)
	return r
}
