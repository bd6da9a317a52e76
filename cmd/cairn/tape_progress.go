package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/dustin/go-humanize"
)

func printExportReport(w io.Writer, st jobs.Status, rep tape.ExportJobReport) {
	fmt.Fprintf(w, "tape export %s: %s\n", st.ID, st.State)
	if r := rep.ExportReport; r != nil {
		fmt.Fprintf(w, "  media set  %s (pool %s)\n", r.MediaSet, rep.Pool)
		fmt.Fprintf(w, "  tapes      %s\n", orNone(strings.Join(r.Tapes, ", ")))
		fmt.Fprintf(w, "  snapshots  %d exported, %d already on the media set, %d failed\n",
			rep.SnapshotsOK, rep.SnapshotsPresent, rep.SnapshotsFailed)
		fmt.Fprintf(w, "  chunks     %d written, %s in %s: %.1f MB/s\n", r.Chunks, humanize.IBytes(uint64(r.Bytes)),
			(time.Duration(rep.Seconds * float64(time.Second))).Round(time.Millisecond), rep.MBps)
		fmt.Fprintf(w, "  readers    %d worker thread(s), chunk order %s; tape writer idle %.0f%% of the time\n",
			r.Workers, rep.ChunkOrder, 100*rep.WriterIdleShare)
		printGoneSnapshots(w, r.Snapshots)
		printFailedSnapshots(w, r.Snapshots)
	}
	printJobErrors(w, st)
	printNext(w, rep.Next)
}

// printGoneSnapshots names the snapshots removed (forget, prune) before
// the export read them.
func printGoneSnapshots(w io.Writer, snaps []tape.SnapshotResult) {
	for _, s := range snaps {
		if s.State == tape.StateGone {
			fmt.Fprintf(w, "  gone       %s: removed from the store before it was read\n", quoteName(s.Snapshot))
		}
	}
}

func printRestoreReport(w io.Writer, st jobs.Status, rep tape.RestoreJobReport) {
	fmt.Fprintf(w, "tape restore %s: %s\n", st.ID, st.State)
	if r := rep.RestoreReport; r != nil {
		fmt.Fprintf(w, "  media set  %s\n", r.MediaSet)
		fmt.Fprintf(w, "  snapshots  %d restored, %d already in the store, %d failed", rep.SnapshotsOK, rep.SnapshotsPresent,
			rep.SnapshotsFailed)
		if rep.ArchivesRefused > 0 {
			fmt.Fprintf(w, "; %d snapshot archive(s) refused", rep.ArchivesRefused)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  chunks     %d inserted (%s), %d already in the store; %.1f MB/s in %s\n", r.Chunks,
			humanize.IBytes(uint64(r.Bytes)), r.ChunksPresent, rep.MBps,
			(time.Duration(rep.Seconds * float64(time.Second))).Round(time.Millisecond))
		fmt.Fprintf(w, "  tape files %s\n", orNone(strings.Join(r.FilesRead, ", ")))
		printFailedSnapshots(w, r.Snapshots)
		printClaims(w, r.Snapshots)
	}
	printJobErrors(w, st)
	printNext(w, rep.Next)
}

// printClaims lists the snapshots that several archives on the media set
// claim, with each archive and what became of it.
func printClaims(w io.Writer, snaps []tape.SnapshotResult) {
	header := false
	for _, s := range snaps {
		if len(s.Archives) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "snapshots claimed by several archives:")
			header = true
		}
		fmt.Fprintf(w, "  %s\n", quoteName(s.Snapshot))
		for _, c := range s.Archives {
			fmt.Fprintf(w, "      tape %s file %d: %s", quoteName(c.Tape), c.File, c.State)
			if c.Reason != "" {
				fmt.Fprintf(w, ": %s", escapeText(c.Reason))
			}
			fmt.Fprintln(w)
		}
	}
}

func printFailedSnapshots(w io.Writer, snaps []tape.SnapshotResult) {
	header := false
	for _, s := range snaps {
		if s.State != tape.StateFailed {
			continue
		}
		if !header {
			fmt.Fprintln(w, "failed snapshots:")
			header = true
		}
		fmt.Fprintf(w, "  %s\n      %s\n", quoteName(s.Snapshot), escapeText(s.Error))
	}
}

func printJobErrors(w io.Writer, st jobs.Status) {
	if len(st.Errors) == 0 {
		return
	}
	fmt.Fprintln(w, "errors:")
	for _, e := range st.Errors {
		fmt.Fprintf(w, "  %s\n", escapeText(e))
	}
	if more := st.ErrorCount - len(st.Errors); more > 0 {
		fmt.Fprintf(w, "  … and %d more\n", more)
	}
}

func printNext(w io.Writer, next []string) {
	if len(next) == 0 {
		return
	}
	fmt.Fprintln(w, "next:")
	for _, n := range next {
		fmt.Fprintf(w, "  - %s\n", escapeText(n))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
