package gc

import (
	"context"
	"errors"

	"github.com/cairnfs/cairn/store"
)

// Kind is the job kind's name, also the name of its job lock.
const Kind = "gc"

// gcRun is one GC's state.
type gcRun struct {
	s   *store.Store
	opt Options
	rep Report
}

func newRun(s *store.Store, opt Options) *gcRun { return &gcRun{s: s, opt: opt} }

func (r *gcRun) run(ctx context.Context) (Report, error) {
	return r.rep, errors.New("gc: not implemented yet")
}
