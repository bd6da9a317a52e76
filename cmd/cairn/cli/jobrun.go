package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/jobs"
)

// runJob runs one job of kind on the store in the foreground and returns
// its final status; Ctrl-C cancels it through a.ctx. The job's log lines
// of level and above go to stderr (-v: from Info); watch, when not nil,
// shows the job while it runs and returns what stops that.
func (a *app) runJob(kind string, params map[string]string, level slog.Level, watch func(*jobs.Job) (stop func())) (jobs.Status, error) {
	s, err := a.openStore()
	if err != nil {
		return jobs.Status{}, err
	}
	defer s.Close()
	// the job's log and its progress line share a terminal
	logTo := *a
	logTo.stderr = progress.ShareTerminal(a.stderr)
	m, err := a.jobManager(s, logTo.newLogger(level))
	if err != nil {
		return jobs.Status{}, err
	}
	defer m.Close()
	j, err := m.Start(kind, params)
	if errors.Is(err, jobs.ErrBadParam) {
		return jobs.Status{}, usageErr("%v", err)
	}
	if err != nil {
		return jobs.Status{}, err
	}
	stop := func() {}
	if watch != nil {
		stop = watch(j)
	}
	<-j.Done()
	stop()
	return j.Status(), nil
}

// jobProgress shows a running job's progress under label, its items
// counted as chunks (the tape jobs' display).
func (a *app) jobProgress(label string) func(*jobs.Job) func() {
	return a.jobProgressOf(label, "chunks")
}

// jobProgressOf is jobProgress for a job whose items are of another kind.
func (a *app) jobProgressOf(label, items string) func(*jobs.Job) func() {
	return func(j *jobs.Job) func() {
		return a.showProgress(label, func() progress.Sample {
			p := j.Progress()
			return progress.Sample{Bytes: p.BytesDone, Total: p.BytesTotal, Items: p.ItemsDone,
				ItemsTotal: p.ItemsTotal, ItemsName: items, Note: p.Phase}
		}).Stop
	}
}

// jobExit turns a finished job into the exit code: 3 when some snapshots
// failed (whatever the job's state says), 1 for other failures and
// cancellation.
func jobExit(what string, st jobs.Status, failed int) error {
	switch {
	case st.State == jobs.StateCancelled:
		return &codeError{exitError, errors.New(what + " cancelled")}
	case st.State == jobs.StateOK && failed == 0:
		return nil
	}
	msg := what + " failed"
	if failed > 0 {
		msg = fmt.Sprintf("%s: %d snapshot(s) failed", what, failed)
	}
	if len(st.Errors) > 0 {
		msg += ": " + st.Errors[len(st.Errors)-1]
	}
	if failed > 0 {
		return &codeError{exitPartial, errors.New(msg)}
	}
	return &codeError{exitError, errors.New(msg)}
}

// printJSON writes v to stdout as indented JSON (every --json output).
func printJSON(a *app, v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
