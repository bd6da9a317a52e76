package gc

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// Kind is the gc job: one garbage collection of the store. The job
// manager holds the store's gc job lock while it runs.
type Kind struct{}

var (
	_ jobs.Kind     = Kind{}
	_ jobs.Work     = (*gcWork)(nil)
	_ jobs.Reporter = (*gcWork)(nil)
	_ Observer      = (*jobs.Job)(nil)
)

// Name implements jobs.Kind.
func (Kind) Name() string { return KindName }

// New implements jobs.Kind.
func (Kind) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	opt, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	return &gcWork{s: s, opt: opt}, nil
}

// ParseParams reads gc's key=value parameters:
//
//	atime-cutoff=DURATION (24h5m, 90m, 0; default 24h5m)
//	mark-workers=1..64  sweep-workers=1..64
func ParseParams(m map[string]string) (Options, error) {
	p := jobs.NewParams(KindName, m)
	opt := Options{
		AtimeCutoff:  DefaultAtimeCutoff,
		MarkWorkers:  p.Int("mark-workers", 0, 1, MaxWorkers),
		SweepWorkers: p.Int("sweep-workers", 0, 1, MaxWorkers),
	}
	v := p.String("atime-cutoff", "")
	if err := p.Done(); err != nil {
		return opt, err
	}
	if v != "" {
		d, err := ParseAtimeCutoff(v)
		if err != nil {
			return opt, fmt.Errorf("%w: gc atime-cutoff=%q: %w", jobs.ErrBadParam, v, err)
		}
		opt.AtimeCutoff = d
	}
	return opt, nil
}

// ParseAtimeCutoff reads an atime cutoff: a Go duration (24h5m, 90m,
// 0) from 0 to MaxAtimeCutoff.
func ParseAtimeCutoff(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > MaxAtimeCutoff {
		return 0, fmt.Errorf("want a duration from 0 to %s such as 24h5m, 30m or 0", MaxAtimeCutoff)
	}
	return d, nil
}

// Params returns the options as the parameters ParseParams reads back.
func (o Options) Params() map[string]string {
	m := map[string]string{"atime-cutoff": o.AtimeCutoff.String()}
	if o.MarkWorkers > 0 {
		m["mark-workers"] = strconv.Itoa(o.MarkWorkers)
	}
	if o.SweepWorkers > 0 {
		m["sweep-workers"] = strconv.Itoa(o.SweepWorkers)
	}
	return m
}

// gcWork is one gc job's work.
type gcWork struct {
	s   *store.Store
	opt Options

	mu   sync.Mutex
	rep  Report
	done bool
}

// Run implements Work: the job reports progress and log lines.
func (w *gcWork) Run(ctx context.Context, j *jobs.Job) error {
	opt := w.opt
	opt.Observer, opt.Logger, opt.UPID, opt.lockHeld = j, j.Logger(), j.ID(), true
	rep, err := Run(ctx, w.s, opt)
	w.mu.Lock()
	w.rep, w.done = rep, true
	w.mu.Unlock()
	return err
}

// Report implements Reporter: the report once the GC has ended (while
// it runs, its progress tells how far it is).
func (w *gcWork) Report() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		return nil
	}
	return w.rep
}
