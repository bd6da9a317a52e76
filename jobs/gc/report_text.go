package gc

import (
	"fmt"
	"io"
	"time"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
)

// WriteText writes the report of a gc run as cairn gc and gc --status
// print it.
func (r Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "gc %s: %s", termsafe.Escape(r.UPID), termsafe.Escape(r.State))
	if !r.Ended.IsZero() {
		fmt.Fprintf(w, " at %s", r.Ended.Local().Format(time.DateTime))
	}
	fmt.Fprintln(w)
	if r.Error != "" {
		fmt.Fprintf(w, "  error     %s\n", termsafe.Escape(r.Error))
	}
	if r.Cutoff.IsZero() {
		return
	}
	fmt.Fprintf(w, "  cutoff    atime before %s (atime cutoff %s", r.Cutoff.Local().Format(time.DateTime),
		time.Duration(r.AtimeCutoffSeconds*float64(time.Second)))
	if r.OldestWriter != nil {
		fmt.Fprintf(w, "; a backup running since %s", r.OldestWriter.Local().Format(time.DateTime))
	}
	fmt.Fprintln(w, ")")
	fmt.Fprintf(w, "  phase 1   %d index files, %d chunk references, %d chunks touched, %d missing, in %s\n",
		r.IndexFileCount, r.ChunkRefs, r.ChunksTouched, r.MissingChunks, seconds(r.Phase1Seconds))
	if r.Phase2Seconds == 0 {
		return
	}
	fmt.Fprintf(w, "  phase 2   %d files in %s\n", r.ChunkFiles, seconds(r.Phase2Seconds))
	fmt.Fprintf(w, "  removed   %d chunks, %d bad, %d temporary: %s\n", r.RemovedChunks, r.RemovedBad, r.RemovedTemp,
		humanize.IBytes(uint64(r.RemovedBytes)))
	fmt.Fprintf(w, "  pending   %d chunks, %s (unused, but newer than the cutoff)\n", r.PendingChunks, humanize.IBytes(uint64(r.PendingBytes)))
	if r.PendingBytes > 0 && r.OldestWriter == nil && r.AtimeCutoffSeconds > 0 {
		fmt.Fprintf(w, "            to free them now, when no backup runs: cairn gc --atime-cutoff 0\n")
	}
	fmt.Fprintf(w, "  on disk   %d chunks, %s for %s of data: deduplication factor %.2f\n", r.DiskChunks,
		humanize.IBytes(uint64(r.DiskBytes)), humanize.IBytes(uint64(r.IndexDataBytes)), r.DedupFactor)
	if r.StillBad > 0 || r.RestoredChunks > 0 {
		fmt.Fprintf(w, "  kept      %d bad copies of chunks still referenced, %d chunks put back\n", r.StillBad, r.RestoredChunks)
	}
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

// WriteLastLine writes the snapshot listing's line on s's last GC (cairn
// snapshots): when it ended and what it removed, or its error, or never.
func WriteLastLine(w io.Writer, s *store.Store) {
	r, ok, err := ReadStatus(s)
	switch {
	case err != nil:
		fmt.Fprintf(w, "last GC: %s\n", termsafe.Escape(err.Error()))
	case !ok:
		fmt.Fprintln(w, "last GC: never")
	case r.State != StateOK:
		fmt.Fprintf(w, "last GC: %s %s: %s\n", r.Ended.Local().Format(time.DateTime), termsafe.Escape(r.State), termsafe.Escape(r.Error))
	default:
		fmt.Fprintf(w, "last GC: %s, removed %d chunks (%s), on disk %s, deduplication factor %.2f\n",
			r.Ended.Local().Format(time.DateTime), r.RemovedChunks, humanize.IBytes(uint64(r.RemovedBytes)),
			humanize.IBytes(uint64(r.DiskBytes)), r.DedupFactor)
	}
}
