package verify

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/jobs"
	"github.com/dustin/go-humanize"
)

// WriteText writes the text report of the verify job st.
func (rep Report) WriteText(w io.Writer, st jobs.Status) {
	state := string(st.State)
	if rep.NothingToVerify && st.State == jobs.StateOK {
		state = "nothing to verify"
	}
	fmt.Fprintf(w, "verify %s: %s\n", st.ID, state)
	fmt.Fprintf(w, "  snapshots  %d ok, %d failed, %d skipped, %d unfinished (not verified)\n",
		rep.SnapshotsOK, rep.SnapshotsFailed, rep.SnapshotsSkipped, rep.SnapshotsUnfinished)
	fmt.Fprintf(w, "  chunks     %d checked, %d corrupt or missing\n", rep.Chunks, rep.ChunksCorrupt)
	if rep.ChunksDecrypted > 0 || rep.ChunksWithoutKey > 0 {
		fmt.Fprintf(w, "  encrypted  %d decrypted and checked by keyed digest, %d checked without their key (CRC, size)\n",
			rep.ChunksDecrypted, rep.ChunksWithoutKey)
	}
	for _, r := range rep.Snapshots {
		if r.WithoutKey {
			fmt.Fprintf(w, "  no key     %s: %s\n", r.Snapshot, termsafe.Escape(r.Encryption))
		}
	}
	fmt.Fprintf(w, "  data       %s read (%s plain) in %s: %.1f MB/s\n", humanize.IBytes(uint64(rep.StoredBytes)),
		humanize.IBytes(uint64(rep.Bytes)), (time.Duration(rep.Seconds * float64(time.Second))).Round(time.Millisecond), rep.MBps)
	fmt.Fprintf(w, "  order      %s, %d read / %d verify threads (%s)\n", rep.ChunkOrder, rep.ReadThreads, rep.VerifyThreads, rep.ChunkOrderReason)
	if rep.SnapshotsFailed > 0 {
		fmt.Fprintln(w, "failed snapshots:")
		for _, r := range rep.Snapshots {
			if r.State != SnapFailed {
				continue
			}
			fmt.Fprintf(w, "  %s\n", r.Snapshot)
			for _, e := range r.Errors {
				fmt.Fprintf(w, "      %s\n", termsafe.Escape(e))
			}
			if more := r.ErrorCount - len(r.Errors); more > 0 {
				fmt.Fprintf(w, "      … and %d more\n", more)
			}
		}
	}
	if len(rep.Corrupt) > 0 {
		fmt.Fprintln(w, "corrupt or missing chunks:")
		for _, c := range rep.Corrupt {
			fmt.Fprintf(w, "  %s  %s\n", c.Digest, termsafe.Escape(c.Reason))
			if c.BadPath != "" {
				fmt.Fprintf(w, "      moved to %s\n", termsafe.Escape(c.BadPath))
			}
			fmt.Fprintf(w, "      used by %s\n", strings.Join(c.Snapshots, ", "))
		}
	}
	var other []string
	for _, e := range st.Errors {
		if !aboutSnapshot(rep, e) {
			other = append(other, e)
		}
	}
	if len(other) > 0 {
		fmt.Fprintln(w, "other errors:")
		for _, e := range other {
			fmt.Fprintf(w, "  %s\n", termsafe.Escape(e))
		}
	}
	fmt.Fprintln(w, "next:")
	for _, n := range rep.Next {
		fmt.Fprintf(w, "  - %s\n", termsafe.Escape(n))
	}
}

// aboutSnapshot tells whether a job error is one listed under a snapshot.
func aboutSnapshot(rep Report, e string) bool {
	for _, r := range rep.Snapshots {
		if strings.HasPrefix(e, r.Snapshot+": ") {
			return true
		}
	}
	return false
}
