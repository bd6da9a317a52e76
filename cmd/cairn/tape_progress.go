package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/dustin/go-humanize"
)

// jobProgress shows a job's progress line (bytes, chunks, MB/s, ETA and
// the job's phase, which names the current tape): rewritten in place on a
// terminal, a plain line every plainEvery otherwise. It polls the job.
type jobProgress struct {
	stop chan struct{}
	done sync.WaitGroup
}

func startJobProgress(w io.Writer, label, items string, j *jobs.Job) *jobProgress {
	p := &jobProgress{stop: make(chan struct{})}
	tty := isTerminal(w)
	every := plainEvery
	if tty {
		every = 500 * time.Millisecond
	}
	start := time.Now()
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				if tty {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-t.C:
			}
			line := jobProgressLine(label, items, j.Progress(), time.Since(start))
			if tty {
				fmt.Fprint(w, "\r\x1b[K"+line)
			} else {
				fmt.Fprintln(w, line)
			}
		}
	}()
	return p
}

// Stop ends the display.
func (p *jobProgress) Stop() {
	close(p.stop)
	p.done.Wait()
}

func jobProgressLine(label, items string, p jobs.Progress, el time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", label, humanize.IBytes(uint64(p.BytesDone)))
	if p.BytesTotal > 0 {
		fmt.Fprintf(&b, " of %s (%.1f%%)", humanize.IBytes(uint64(p.BytesTotal)), 100*float64(p.BytesDone)/float64(p.BytesTotal))
	}
	if p.ItemsTotal > 0 {
		fmt.Fprintf(&b, ", %d of %d %s", p.ItemsDone, p.ItemsTotal, items)
	} else {
		fmt.Fprintf(&b, ", %d %s", p.ItemsDone, items)
	}
	fmt.Fprintf(&b, ", %.1f MB/s", p.BytesPerSec/1e6)
	eta := p.ETASeconds
	if eta == 0 && p.BytesTotal == 0 && p.ItemsTotal > p.ItemsDone && p.ItemsDone > 0 {
		eta = el.Seconds() * float64(p.ItemsTotal-p.ItemsDone) / float64(p.ItemsDone)
	}
	if eta > 0 {
		fmt.Fprintf(&b, ", ETA %s", (time.Duration(eta * float64(time.Second))).Round(time.Second))
	}
	if p.Phase != "" {
		fmt.Fprintf(&b, ", %s", p.Phase)
	}
	return b.String()
}

func printExportReport(w io.Writer, st jobs.Status, rep tape.TapeExportReport) {
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
			fmt.Fprintf(w, "  gone       %s: removed from the store before it was read\n", s.Snapshot)
		}
	}
}

func printRestoreReport(w io.Writer, st jobs.Status, rep tape.TapeRestoreReport) {
	fmt.Fprintf(w, "tape restore %s: %s\n", st.ID, st.State)
	if r := rep.RestoreReport; r != nil {
		fmt.Fprintf(w, "  media set  %s\n", r.MediaSet)
		fmt.Fprintf(w, "  snapshots  %d restored, %d already in the store, %d failed\n",
			rep.SnapshotsOK, rep.SnapshotsPresent, rep.SnapshotsFailed)
		fmt.Fprintf(w, "  chunks     %d inserted (%s), %d already in the store; %.1f MB/s in %s\n", r.Chunks,
			humanize.IBytes(uint64(r.Bytes)), r.ChunksPresent, rep.MBps,
			(time.Duration(rep.Seconds * float64(time.Second))).Round(time.Millisecond))
		fmt.Fprintf(w, "  tape files %s\n", orNone(strings.Join(r.FilesRead, ", ")))
		printFailedSnapshots(w, r.Snapshots)
	}
	printJobErrors(w, st)
	printNext(w, rep.Next)
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
		fmt.Fprintf(w, "  %s\n      %s\n", s.Snapshot, s.Error)
	}
}

func printJobErrors(w io.Writer, st jobs.Status) {
	if len(st.Errors) == 0 {
		return
	}
	fmt.Fprintln(w, "errors:")
	for _, e := range st.Errors {
		fmt.Fprintf(w, "  %s\n", e)
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
		fmt.Fprintf(w, "  - %s\n", n)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
