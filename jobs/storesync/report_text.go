package storesync

import (
	"fmt"
	"io"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/jobs"
	"github.com/dustin/go-humanize"
)

// WriteText writes the text report of the sync job st.
func (r Report) WriteText(w io.Writer, st jobs.Status) {
	fmt.Fprintf(w, "sync %s: %s\n", st.ID, st.State)
	fmt.Fprintf(w, "  from       %s\n  to         %s\n", r.From, r.To)
	fmt.Fprintf(w, "  snapshots  %d copied, %d skipped, %d failed", r.SnapshotsCopied, r.SnapshotsSkipped, r.SnapshotsFailed)
	if r.SnapshotsRemoved+r.SnapshotsKept > 0 {
		fmt.Fprintf(w, "; vanished: %d removed, %d kept", r.SnapshotsRemoved, r.SnapshotsKept)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  chunks     %d copied (%s), %d reused\n", r.ChunksCopied, humanize.IBytes(uint64(r.BytesCopied)), r.ChunksReused)
	fmt.Fprintf(w, "  data       %s in %.1f s\n", humanize.IBytes(uint64(r.DataBytes)), r.Seconds)
	for _, s := range r.Snapshots {
		if s.Outcome == Failed {
			fmt.Fprintf(w, "  failed     %s: %s\n", termsafe.Quote(s.Snapshot), termsafe.Escape(s.Error))
		}
	}
	if len(st.Errors) > 0 {
		fmt.Fprintln(w, "errors:")
		for _, e := range st.Errors {
			fmt.Fprintf(w, "  %s\n", termsafe.Escape(e))
		}
	}
}
