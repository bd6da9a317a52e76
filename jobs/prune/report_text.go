package prune

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/jobs"
	"github.com/dustin/go-humanize"
)

// WriteText writes the text report of the prune job st.
func (rep Report) WriteText(w io.Writer, st jobs.Status) {
	dry := ""
	if rep.DryRun {
		dry = " (dry run: nothing removed)"
	}
	fmt.Fprintf(w, "prune %s: %s%s\n", st.ID, st.State, dry)
	fmt.Fprintf(w, "  options  %s\n", rep.Options)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rep.Snapshots {
		outcome := pruneOutcome(r, rep.DryRun)
		if r.Rule != "" {
			outcome = "by " + r.Rule // as PBS shows which rule kept it
		}
		what := strings.TrimRight(fmt.Sprintf("%-12s  %s", r.Mark, outcome), " ")
		fmt.Fprintf(tw, "  %s\t%s\n", r.Snapshot, what)
	}
	tw.Flush()
	if rep.SnapshotsOmitted > 0 {
		fmt.Fprintf(w, "  … and %d more snapshot(s) (see the job's counts)\n", rep.SnapshotsOmitted)
	}
	c := rep.Marks
	fmt.Fprintf(w, "  groups   %d: %d keep, %d keep-partial, %d protected, %d remove\n",
		rep.Groups, c.Keep, c.KeepPartial, c.Protected, c.Remove)
	if !rep.DryRun {
		fmt.Fprintf(w, "  removed  %d, skipped %d, failed %d\n", rep.Removed, rep.Skipped, rep.Failed)
	}
	if f := rep.WouldFree; f != nil {
		fmt.Fprintf(w, "  %s\n", wouldFree(f))
	}
	if len(st.Errors) > 0 {
		fmt.Fprintln(w, "errors:")
		for _, e := range st.Errors {
			fmt.Fprintf(w, "  %s\n", termsafe.Escape(e))
		}
	}
}

// pruneOutcome says what became of a snapshot marked remove.
func pruneOutcome(r SnapshotResult, dry bool) string {
	switch {
	case r.Mark != Remove:
		return ""
	case dry:
		return "would be removed"
	case r.Removed:
		return "removed"
	case r.Skipped != "":
		return "skipped: " + r.Skipped
	case r.Error != "":
		return "failed: " + r.Error
	}
	return "not removed"
}

// wouldFree is a dry run's line on what the plan frees.
func wouldFree(f *Freed) string {
	files := humanize.IBytes(uint64(f.FileBytes))
	s := fmt.Sprintf("would free %s (stored; %s logical, %d chunks) after gc, and %s of snapshot files",
		humanize.IBytes(uint64(f.Stored)), humanize.IBytes(uint64(f.Logical)), f.Chunks, files)
	if !f.StoredKnown {
		s = fmt.Sprintf("would free %s (logical: chunk sizes are not read from object storage; %d chunks) after gc, and %s of snapshot files",
			humanize.IBytes(uint64(f.Logical)), f.Chunks, files)
	}
	if f.Error != "" {
		s += "\n  warning: " + f.Error
	}
	return s
}
