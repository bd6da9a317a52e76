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
	// WouldFree is what a dry run's plan would free (nil otherwise).
	WouldFree *Freed `json:"would_free,omitempty"`
}

// Freed is what removing the snapshots a plan marks remove would free:
// the chunks no other snapshot references (those shared only among the
// removed ones included), after garbage collection, and their snapshot
// directories' files, at once (store/usage).
type Freed struct {
	Snapshots int   `json:"snapshots"`
	Chunks    int64 `json:"chunks"`
	Stored    int64 `json:"stored"`  // the chunk files' bytes, as gc counts them
	Logical   int64 `json:"logical"` // their plain bytes
	FileBytes int64 `json:"file_bytes"`
	// StoredKnown is false on a store on object storage, where chunk
	// sizes are not read (Stored is 0 then).
	StoredKnown bool `json:"stored_known"`
	// Error says what could not be read: the figures may then be too high.
	Error string `json:"error,omitempty"`
}

// SnapshotResult is one snapshot's mark and what became of it.
type SnapshotResult struct {
	Snapshot string `json:"snapshot"`
	Mark     Mark   `json:"mark"`
	Rule     string `json:"rule,omitempty"` // the keep option that kept it
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
	if r.WouldFree != nil {
		f := *r.WouldFree
		r.WouldFree = &f
	}
	return r
}
