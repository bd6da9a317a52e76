package verify

import (
	"fmt"
	"slices"
	"strings"
)

// Snapshot results of verify.
const (
	SnapOK      = "ok"
	SnapFailed  = "failed"
	SnapSkipped = "skipped"
)

// maxSnapErrors bounds the errors kept per snapshot in a report.
const maxSnapErrors = 20

// Report is what a verify job found; Status.Result holds one.
type Report struct {
	ChunkOrder       string `json:"chunk_order"`
	ChunkOrderReason string `json:"chunk_order_reason,omitempty"`
	ReadThreads      int    `json:"read_threads"`
	VerifyThreads    int    `json:"verify_threads"`
	SnapshotsOK      int    `json:"snapshots_ok"`
	SnapshotsFailed  int    `json:"snapshots_failed"`
	SnapshotsSkipped int    `json:"snapshots_skipped"`
	// SnapshotsUnfinished counts the selected snapshots that have no
	// manifest yet (a backup in progress or one that died): not verified.
	SnapshotsUnfinished int `json:"snapshots_unfinished"`
	// NothingToVerify is set when the selection held no finished
	// snapshot to verify (none at all, or only unfinished or skipped
	// ones); the job is then ok.
	NothingToVerify bool  `json:"nothing_to_verify"`
	Chunks          int64 `json:"chunks"`         // verified by this job
	ChunksCorrupt   int   `json:"chunks_corrupt"` // corrupt or missing
	// ChunksDecrypted counts the encrypted chunks decrypted with their
	// snapshot's key and checked against their keyed digest;
	// ChunksWithoutKey those whose key was not given, checked as PBS
	// checks them without it: CRC, structure and ciphertext size.
	ChunksDecrypted  int64            `json:"chunks_decrypted"`
	ChunksWithoutKey int64            `json:"chunks_checked_without_key"`
	Bytes            int64            `json:"bytes"`        // plain bytes of the chunks verified
	StoredBytes      int64            `json:"stored_bytes"` // blob bytes read
	Seconds          float64          `json:"seconds"`
	MBps             float64          `json:"mb_per_s"`       // stored bytes read per second
	PlainMBps        float64          `json:"plain_mb_per_s"` // plain bytes verified per second
	Snapshots        []SnapshotResult `json:"snapshots"`
	Corrupt          []CorruptChunk   `json:"corrupt_chunks"`
	Next             []string         `json:"next_steps"`
}

// SnapshotResult is one snapshot's verification.
type SnapshotResult struct {
	Snapshot string `json:"snapshot"`
	Group    string `json:"group"`
	State    string `json:"state"`
	// Damaged is set when the manifest, an index or a blob is bad: a new
	// backup does not repair that.
	Damaged bool `json:"damaged,omitempty"`
	// Encryption says how an encrypted or signed snapshot was checked:
	// with its key (named by fingerprint), or without it.
	Encryption string `json:"encryption,omitempty"`
	// WithoutKey: encrypted with a key the job was not given, so its
	// chunks' digests and its manifest's signature were not checked.
	WithoutKey bool     `json:"without_key,omitempty"`
	BadChunks  int      `json:"bad_chunks,omitempty"`
	Errors     []string `json:"errors,omitempty"`
	ErrorCount int      `json:"error_count,omitempty"`
}

func (r *SnapshotResult) fail(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	r.ErrorCount++
	if len(r.Errors) < maxSnapErrors {
		r.Errors = append(r.Errors, msg)
	}
	return msg
}

// CorruptChunk is a chunk found corrupt or missing, with the snapshots
// verified by this job that use it.
type CorruptChunk struct {
	Digest    string   `json:"digest"`
	Reason    string   `json:"reason"`
	BadPath   string   `json:"bad_path,omitempty"` // where it was moved
	Snapshots []string `json:"snapshots"`
}

func (r Report) clone() Report {
	r.Snapshots = slices.Clone(r.Snapshots)
	for i := range r.Snapshots {
		r.Snapshots[i].Errors = slices.Clone(r.Snapshots[i].Errors)
	}
	r.Corrupt = slices.Clone(r.Corrupt)
	for i := range r.Corrupt {
		r.Corrupt[i].Snapshots = slices.Clone(r.Corrupt[i].Snapshots)
	}
	r.Next = slices.Clone(r.Next)
	return r
}

// nextSteps tells the user what to do about what the report found.
func (r *Report) nextSteps(cancelled bool) []string {
	var out []string
	if cancelled {
		out = append(out, "The job was cancelled: snapshots it did not finish keep their previous verify state. "+
			"Run it again with --ignore-verified (in a job's control: ignore-verified=true) to go on where it stopped.")
	}
	var heal, damaged, failed []string
	for _, s := range r.Snapshots {
		if s.State != SnapFailed {
			continue
		}
		failed = append(failed, s.Snapshot)
		if s.Damaged {
			damaged = append(damaged, s.Snapshot)
		}
		if s.BadChunks > 0 && !slices.Contains(heal, s.Group) {
			heal = append(heal, s.Group)
		}
	}
	if r.ChunksCorrupt > 0 {
		out = append(out, fmt.Sprintf("%d chunk(s) are corrupt or missing. Corrupt ones were moved aside as "+
			"<digest>.N.bad in .chunks (kept, not deleted).", r.ChunksCorrupt))
	}
	if len(heal) > 0 {
		out = append(out, "Run a new backup of "+strings.Join(heal, ", ")+": a snapshot that failed verification is "+
			"not used as the base of the next backup, so that backup uploads the lost chunks again and heals "+
			"every older snapshot that shares them (where the source still has that data).")
	}
	if len(damaged) > 0 {
		out = append(out, "A new backup does not repair a damaged manifest, index or blob of "+
			strings.Join(damaged, ", ")+"; copy out what is still readable and remove those snapshots.")
	}
	if len(failed) > 0 {
		out = append(out, "Then verify the failed snapshots again: cairn verify "+strings.Join(failed, " "))
	}
	var keyless []string
	for _, s := range r.Snapshots {
		if s.WithoutKey && s.State == SnapOK {
			keyless = append(keyless, s.Snapshot)
		}
	}
	if len(keyless) > 0 {
		out = append(out, fmt.Sprintf("%d encrypted snapshot(s) were checked without their key (CRC, structure and "+
			"sizes, as PBS does): verify them with --keyfile to check their data and manifest signatures too: %s",
			len(keyless), strings.Join(keyless, " ")))
	}
	switch {
	case len(failed) > 0 || cancelled:
	case r.NothingToVerify:
		out = append(out, fmt.Sprintf("Nothing to verify: the selection holds no finished snapshot that needed it "+
			"(%d unfinished: no manifest yet; %d skipped as verified before).", r.SnapshotsUnfinished, r.SnapshotsSkipped))
	default:
		out = append(out, fmt.Sprintf("Nothing to do: %d snapshot(s) verified ok.", r.SnapshotsOK))
	}
	return out
}
