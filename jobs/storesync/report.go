package storesync

import "slices"

// MaxReported bounds the snapshots a report lists; the others are
// counted in SnapshotsOmitted (the counts still have them).
const MaxReported = 100_000

// Outcomes of a snapshot in a Report.
const (
	Copied    = "copied"    // copied into the target
	Exists    = "exists"    // the target has it, finished
	Older     = "older"     // not newer than the target group's newest snapshot
	Failed    = "failed"    // its copy failed (Error says why)
	Removed   = "removed"   // vanished from the source, removed from the target
	Protected = "protected" // vanished from the source, kept: protected
	InUse     = "in_use"    // vanished from the source, kept: locked by another user
)

// Report is the result of a sync.
type Report struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Snapshots by outcome.
	SnapshotsCopied  int `json:"snapshots_copied"`
	SnapshotsSkipped int `json:"snapshots_skipped"` // exists or older
	SnapshotsFailed  int `json:"snapshots_failed"`
	SnapshotsRemoved int `json:"snapshots_removed"`
	SnapshotsKept    int `json:"snapshots_kept"` // vanished, but protected or in use
	// Chunks referenced by the copied snapshots: copied from the source,
	// or found in the target (touched, not copied).
	ChunksCopied int64 `json:"chunks_copied"`
	ChunksReused int64 `json:"chunks_reused"`
	// BytesCopied is the stored (blob) bytes of the chunks copied;
	// DataBytes the plain bytes the copied snapshots' indexes describe.
	BytesCopied int64   `json:"bytes_copied"`
	DataBytes   int64   `json:"data_bytes"`
	Seconds     float64 `json:"seconds"`
	// Snapshots lists each snapshot met, in the order handled.
	Snapshots        []SnapshotResult `json:"snapshots"`
	SnapshotsOmitted int              `json:"snapshots_omitted"`
}

// SnapshotResult is what became of one snapshot.
type SnapshotResult struct {
	Snapshot string `json:"snapshot"`
	Outcome  string `json:"outcome"`
	Error    string `json:"error,omitempty"`
}

// add records one snapshot's outcome.
func (r *Report) add(res SnapshotResult) {
	switch res.Outcome {
	case Copied:
		r.SnapshotsCopied++
	case Exists, Older:
		r.SnapshotsSkipped++
	case Failed:
		r.SnapshotsFailed++
	case Removed:
		r.SnapshotsRemoved++
	case Protected, InUse:
		r.SnapshotsKept++
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
