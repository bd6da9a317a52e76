package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/internal/termsafe"
)

// State is where a job is in its life.
type State string

// Job states.
const (
	StateQueued    State = "queued"
	StateRunning   State = "running"
	StateOK        State = "ok"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
	// StateIdle is reported for a kind that has not run a job yet.
	StateIdle State = "idle"
)

// Done reports whether the state is final.
func (s State) Done() bool { return s == StateOK || s == StateFailed || s == StateCancelled }

// Bounds of what a job keeps in memory.
const (
	MaxLogLines  = 1000
	MaxLineBytes = 1024
	MaxErrors    = 100
)

// Progress is how far a job is. Totals of zero mean unknown.
type Progress struct {
	Phase       string  `json:"phase,omitempty"`
	ItemsDone   int64   `json:"items_done"`
	ItemsTotal  int64   `json:"items_total"`
	BytesDone   int64   `json:"bytes_done"`
	BytesTotal  int64   `json:"bytes_total"`
	BytesPerSec float64 `json:"bytes_per_sec"`
	ETASeconds  float64 `json:"eta_seconds,omitempty"`
}

// Status is a JSON-serialisable picture of a job (or of a kind that has
// not run one yet) at one moment.
type Status struct {
	Kind       string            `json:"kind"`
	ID         string            `json:"id,omitempty"`
	State      State             `json:"state"`
	Params     map[string]string `json:"params,omitempty"`
	Progress   Progress          `json:"progress"`
	Started    *time.Time        `json:"started,omitempty"`
	Ended      *time.Time        `json:"ended,omitempty"`
	Errors     []string          `json:"errors,omitempty"`
	ErrorCount int               `json:"error_count"`
	Result     any               `json:"result,omitempty"`
	// LastCommandError is why the last command written for this kind was
	// refused (empty once a command was accepted).
	LastCommandError string `json:"last_command_error,omitempty"`
}

// Reporter is implemented by a Work that has a result to show in Status
// (while it runs and after). Report must be safe to call concurrently
// with Run.
type Reporter interface {
	Report() any
}

// Job is one run of a kind. Its Work reports through it.
type Job struct {
	id     string
	kind   string
	params map[string]string
	work   Work
	logger *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	itemsDone, bytesDone atomic.Int64

	mu         sync.Mutex
	state      State
	phase      string
	itemsTotal int64
	bytesTotal int64
	started    time.Time
	rateStart  time.Time // when the current totals were set
	rateBase   int64     // bytesDone at rateStart
	ended      time.Time
	errors     []string
	errorCount int
	log        []string // ring of lines
	logNext    int
}

func newJob(id, kind string, params map[string]string, w Work, logger *slog.Logger) *Job {
	return &Job{id: id, kind: kind, params: maps.Clone(params), work: w, state: StateQueued,
		logger: logger.With("job", id), done: make(chan struct{})}
}

// ID is the job's id (a PBS-style UPID).
func (j *Job) ID() string { return j.id }

// Kind is the job's kind.
func (j *Job) Kind() string { return j.kind }

// Logger is the job's logger (the manager's, with the job's id); a kind
// hands it to the engine it runs.
func (j *Job) Logger() *slog.Logger { return j.logger }

// Done is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Logf adds a line to the job's log (and to the manager's logger).
func (j *Job) Logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	j.logger.Info(line)
	j.addLine(line)
}

// addLine adds a line to the job's log (.jobs/*/log), escaped: it may
// quote names from stored data, and the log is read on terminals.
func (j *Job) addLine(line string) {
	line = termsafe.Escape(line)
	if len(line) > MaxLineBytes {
		line = line[:MaxLineBytes] + "…"
	}
	line = time.Now().UTC().Format(time.RFC3339) + " " + line
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.log) < MaxLogLines {
		j.log = append(j.log, line)
		return
	}
	j.log[j.logNext] = line
	j.logNext = (j.logNext + 1) % MaxLogLines
}

// Errorf records an error that does not stop the job; a job that recorded
// any ends failed. The error is logged too.
func (j *Job) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	j.logger.Warn(msg)
	j.addLine("ERROR: " + msg)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.errorCount++
	if len(j.errors) < MaxErrors {
		j.errors = append(j.errors, msg)
	}
}

// ErrorCount is the number of errors recorded so far.
func (j *Job) ErrorCount() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.errorCount
}

// SetPhase names what the job is doing now ("planning", "verifying").
func (j *Job) SetPhase(phase string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.phase = phase
}

// SetTotals sets the amount of work; the rate is measured from now.
func (j *Job) SetTotals(items, bytes int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.itemsTotal, j.bytesTotal = items, bytes
	j.rateStart, j.rateBase = time.Now(), j.bytesDone.Load()
}

// AddDone counts finished work. It takes no lock.
func (j *Job) AddDone(items, bytes int64) {
	j.itemsDone.Add(items)
	j.bytesDone.Add(bytes)
}

// Log returns the kept log lines, oldest first.
func (j *Job) Log() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]string, 0, len(j.log))
	out = append(out, j.log[j.logNext:]...)
	return append(out, j.log[:j.logNext]...)
}

// State is the job's current state.
func (j *Job) State() State {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state
}

// Progress returns how far the job is, without its result.
func (j *Job) Progress() Progress {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.progressLocked()
}

func (j *Job) progressLocked() Progress {
	p := Progress{Phase: j.phase, ItemsDone: j.itemsDone.Load(), ItemsTotal: j.itemsTotal,
		BytesDone: j.bytesDone.Load(), BytesTotal: j.bytesTotal}
	end := time.Now()
	if !j.ended.IsZero() {
		end = j.ended
	}
	if !j.rateStart.IsZero() {
		if el := end.Sub(j.rateStart).Seconds(); el > 0 {
			p.BytesPerSec = float64(p.BytesDone-j.rateBase) / el
		}
	}
	if p.BytesPerSec > 0 && p.BytesTotal > p.BytesDone && !j.state.Done() {
		p.ETASeconds = float64(p.BytesTotal-p.BytesDone) / p.BytesPerSec
	}
	return p
}

// Status returns the job's status now.
func (j *Job) Status() Status {
	j.mu.Lock()
	st := Status{Kind: j.kind, ID: j.id, State: j.state, Params: maps.Clone(j.params),
		Errors: append([]string(nil), j.errors...), ErrorCount: j.errorCount, Progress: j.progressLocked()}
	if !j.started.IsZero() {
		t := j.started
		st.Started = &t
	}
	if !j.ended.IsZero() {
		t := j.ended
		st.Ended = &t
	}
	j.mu.Unlock()
	if r, ok := j.work.(Reporter); ok {
		st.Result = r.Report()
	}
	return st
}

// run executes the work and records how it ended. release runs after the
// work and before the job shows as ended.
func (j *Job) run(ctx context.Context, release func()) {
	j.mu.Lock()
	j.state, j.started = StateRunning, time.Now()
	j.mu.Unlock()
	j.Logf("%s job started (%s)", j.kind, formatParams(j.params))
	err := j.work.Run(ctx, j)
	state := StateOK
	switch {
	case ctx.Err() != nil:
		state = StateCancelled
		j.Logf("cancelled")
	case err != nil:
		state = StateFailed
		j.Errorf("%v", err)
	case j.ErrorCount() > 0:
		state = StateFailed
	}
	release()
	j.mu.Lock()
	j.state, j.ended = state, time.Now()
	n := j.errorCount
	j.mu.Unlock()
	j.Logf("%s job ended: %s (%d errors)", j.kind, state, n)
	close(j.done)
}
