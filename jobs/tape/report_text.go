package tape

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/jobs"
	"github.com/dustin/go-humanize"
)

// WriteText writes the text report of the tape export job st.
func (rep ExportJobReport) WriteText(w io.Writer, st jobs.Status) {
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
func printGoneSnapshots(w io.Writer, snaps []SnapshotResult) {
	for _, s := range snaps {
		if s.State == StateGone {
			fmt.Fprintf(w, "  gone       %s: removed from the store before it was read\n", termsafe.Quote(s.Snapshot))
		}
	}
}

// WriteText writes the text report of the tape restore job st.
func (rep RestoreJobReport) WriteText(w io.Writer, st jobs.Status) {
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
func printClaims(w io.Writer, snaps []SnapshotResult) {
	header := false
	for _, s := range snaps {
		if len(s.Archives) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "snapshots claimed by several archives:")
			header = true
		}
		fmt.Fprintf(w, "  %s\n", termsafe.Quote(s.Snapshot))
		for _, c := range s.Archives {
			fmt.Fprintf(w, "      tape %s file %d: %s", termsafe.Quote(c.Tape), c.File, c.State)
			if c.Reason != "" {
				fmt.Fprintf(w, ": %s", termsafe.Escape(c.Reason))
			}
			fmt.Fprintln(w)
		}
	}
}

func printFailedSnapshots(w io.Writer, snaps []SnapshotResult) {
	header := false
	for _, s := range snaps {
		if s.State != StateFailed {
			continue
		}
		if !header {
			fmt.Fprintln(w, "failed snapshots:")
			header = true
		}
		fmt.Fprintf(w, "  %s\n      %s\n", termsafe.Quote(s.Snapshot), termsafe.Escape(s.Error))
	}
}

func printJobErrors(w io.Writer, st jobs.Status) {
	if len(st.Errors) == 0 {
		return
	}
	fmt.Fprintln(w, "errors:")
	for _, e := range st.Errors {
		fmt.Fprintf(w, "  %s\n", termsafe.Escape(e))
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
		fmt.Fprintf(w, "  - %s\n", termsafe.Escape(n))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// WriteText writes the drive's tapes (a table) and media sets.
func (st DriveStatus) WriteText(w io.Writer) {
	fmt.Fprintf(w, "drive %s\n", st.Drive)
	if len(st.Tapes) == 0 {
		fmt.Fprintln(w, "no tapes (cairn tape label or tape export create them)")
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TAPE\tPOOL\tMEDIA SET\tSEQ\tFILES\tUSED\tCAPACITY\tSTATE")
	for _, t := range st.Tapes {
		seq, state := "-", "writable"
		if t.SeqNr != nil {
			seq = fmt.Sprint(*t.SeqNr)
		}
		switch {
		case t.Missing:
			state = "missing from the drive"
		case t.UUID == "":
			state = "unlabelled"
		case t.Full:
			state = "full"
		}
		if t.Loaded {
			state += ", loaded"
		}
		used := fmt.Sprintf("%s (%.0f%%)", humanize.IBytes(uint64(t.Used)), 100*float64(t.Used)/float64(max(t.Capacity, 1)))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", t.Label, orDash(t.Pool), orDash(t.MediaSet), seq, t.Files,
			used, humanize.IBytes(uint64(t.Capacity)), state)
	}
	tw.Flush()
	if len(st.MediaSets) == 0 {
		return
	}
	fmt.Fprintln(w, "media sets:")
	for _, s := range st.MediaSets {
		fmt.Fprintf(w, "  %s  pool %s, created %s, tapes %s: %d snapshots, %d chunks\n", s.UUID, s.Pool,
			s.Created.Format(time.RFC3339), orNone(strings.Join(s.Tapes, ", ")), s.Snapshots, s.Chunks)
		if s.Error != "" {
			fmt.Fprintf(w, "      error: %s\n", termsafe.Escape(s.Error))
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteCatalogs writes what each tape file of each media set holds, and
// where each snapshot is.
func WriteCatalogs(w io.Writer, sets []CatalogSet) {
	if len(sets) == 0 {
		fmt.Fprintln(w, "no media sets")
	}
	for _, s := range sets {
		fmt.Fprintf(w, "media set %s (pool %s, %d tapes)\n", s.UUID, s.Pool, len(s.Tapes))
		for _, t := range s.Tapes {
			fmt.Fprintf(w, "  tape %s (seq %d)\n", t.Label, t.SeqNr)
			for _, f := range t.Files {
				switch f.Kind {
				case FileChunkArchive:
					fmt.Fprintf(w, "    file %-4d chunk archive     %s: %d chunks\n", f.File, termsafe.Quote(f.Store), f.Chunks)
				case FileSnapshot:
					fmt.Fprintf(w, "    file %-4d snapshot archive  %s\n", f.File, termsafe.Quote(f.Store+":"+f.Snapshot))
				case FileLabel:
					what := "media label"
					if f.File == 1 {
						what = "media set label"
					}
					fmt.Fprintf(w, "    file %-4d %s\n", f.File, what)
				default:
					fmt.Fprintf(w, "    file %-4d %s\n", f.File, f.Kind)
				}
			}
		}
		fmt.Fprintln(w, "  snapshots:")
		for _, r := range s.Snapshots {
			fmt.Fprintf(w, "    %s  tape %s file %d\n", termsafe.Quote(r.Store+":"+r.Snapshot), termsafe.Quote(r.Tape), r.File)
		}
	}
}
