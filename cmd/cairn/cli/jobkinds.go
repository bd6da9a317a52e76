package cli

import (
	"log/slog"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/jobs/prune"
	"github.com/cairnfs/cairn/jobs/storesync"
	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/cairnfs/cairn/store"
)

// jobKinds are every kind of job cairn has: the one place they are
// registered, for the mount's .jobs tree and for foreground commands.
func jobKinds() []jobs.Kind {
	return []jobs.Kind{verify.Kind{}, tape.ExportKind{}, tape.RestoreKind{},
		prune.Kind{}, gc.Kind{}, storesync.Kind{}}
}

// jobManager returns a job manager for s with every job kind, logging
// to logger.
func (a *app) jobManager(s *store.Store, logger *slog.Logger) (*jobs.Manager, error) {
	m := jobs.NewManager(a.ctx, s, logger)
	for _, k := range jobKinds() {
		if err := m.Register(k); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}
