package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/backup"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/cairnfs/cairn/serve/runlog"
)

// logTail bounds the log lines a run keeps.
const logTail = 20

// chunkKinds are the kinds whose progress counts chunks as its items.
var chunkKinds = map[string]bool{verify.Kind{}.Name(): true, backup.KindName: true}

// launch starts a run of j due at due, unless one of its kind runs (a
// run of the daemon: then this one is recorded skipped) or the daemon is
// stopping.
func (d *Daemon) launch(j JobSpec, due time.Time, catchUp bool) {
	d.mu.Lock()
	other, busy := d.running[j.Kind]
	if d.stopping || busy {
		d.mu.Unlock()
		why := errStopping.Error()
		if busy {
			why = fmt.Sprintf("a %s job (%s) was still running", j.Kind, other)
		}
		d.skipped(j, due, catchUp, why)
		return
	}
	d.running[j.Kind] = j.Name
	d.wg.Add(1)
	d.mu.Unlock()
	go func() {
		defer d.wg.Done()
		end := d.runJob(j, due, catchUp)
		d.mu.Lock()
		delete(d.running, j.Kind)
		stopping := d.stopping
		d.mu.Unlock()
		if !stopping {
			d.sample(context.Background())
		}
		end.emit(d) // once the run and the sample are in the status
	}()
}

// skipped records a run that was due but not started.
func (d *Daemon) skipped(j JobSpec, due time.Time, catchUp bool, why string) {
	now := d.opt.Now()
	d.opt.Logger.Warn("scheduled run skipped", "job", j.Name, "kind", j.Kind, "due", due, "why", why)
	d.record(runlog.Run{Job: j.Name, Kind: j.Kind, Due: due, Start: now, End: now, Result: runlog.ResultSkipped,
		Error: why, CatchUp: catchUp})
}

// ending is the event a run's end is told with (none: kind "").
type ending struct {
	kind    runlog.EventKind
	run     runlog.Run
	summary string
}

func (e ending) emit(d *Daemon) {
	if e.kind != "" {
		d.emit(e.kind, &e.run, nil, e.summary)
	}
}

// runJob starts j through the manager, records it running, waits for it
// and records how it ended, telling the notifier of each step. A start
// the manager refuses because a job of the kind runs (from the mount's
// control file, or another process) is a skipped run.
func (d *Daemon) runJob(j JobSpec, due time.Time, catchUp bool) ending {
	job, err := d.mgr.Start(j.Kind, j.JobParams())
	if errors.Is(err, jobs.ErrRunning) || errors.Is(err, jobs.ErrClosed) {
		d.skipped(j, due, catchUp, err.Error())
		return ending{}
	}
	run := runlog.Run{Job: j.Name, Kind: j.Kind, Due: due, Start: d.opt.Now(), Result: runlog.ResultRunning, CatchUp: catchUp}
	if err != nil {
		run.End, run.Result, run.Error = run.Start, runlog.ResultFailed, termsafe.Escape(err.Error())
		d.record(run)
		return ending{runlog.EventFailed, run, fmt.Sprintf("%s job %q could not start: %s", j.Kind, j.Name, run.Error)}
	}
	run.UPID = job.ID()
	d.record(run)
	d.emit(runlog.EventStarted, &run, nil, fmt.Sprintf("%s job %q started", j.Kind, j.Name))
	<-job.Done()
	st := job.Status()
	run.End, run.ExitState = d.opt.Now(), string(st.State)
	run.Bytes = st.Progress.BytesDone
	if chunkKinds[j.Kind] {
		run.Chunks = st.Progress.ItemsDone
	}
	if lines := job.Log(); len(lines) > logTail {
		run.LogTail = lines[len(lines)-logTail:]
	} else {
		run.LogTail = lines
	}
	return d.finish(j, run, st)
}

// finish records a run's end and returns its event: succeeded or
// failed; a run cancelled (the daemon stopping, a cancel written to the
// mount's control file) is recorded and logged, not notified.
func (d *Daemon) finish(j JobSpec, run runlog.Run, st jobs.Status) ending {
	switch st.State {
	case jobs.StateOK:
		run.Result = runlog.ResultOK
		d.record(run)
		return ending{runlog.EventSucceeded, run, fmt.Sprintf("%s job %q succeeded", j.Kind, j.Name)}
	case jobs.StateCancelled:
		run.Result = runlog.ResultCancelled
		d.record(run)
		d.opt.Logger.Warn("scheduled run cancelled", "job", j.Name, "kind", j.Kind)
		return ending{}
	}
	run.Result = runlog.ResultFailed
	if len(st.Errors) > 0 {
		run.Error = st.Errors[0]
	}
	d.record(run)
	return ending{runlog.EventFailed, run, fmt.Sprintf("%s job %q failed: %s (%d errors)", j.Kind, j.Name,
		termsafe.Escape(run.Error), st.ErrorCount)}
}

// record writes run to the journal; a journal that cannot be written is
// logged (the run goes on).
func (d *Daemon) record(run runlog.Run) {
	if err := d.journal.Record(run); err != nil {
		d.opt.Logger.Error("journal not written", "err", err)
	}
}
