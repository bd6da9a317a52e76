package serve

import (
	"context"
	"log/slog"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/backup"
	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/jobs/prune"
	"github.com/cairnfs/cairn/jobs/storesync"
	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/cairnfs/cairn/store"
)

// Kinds are every kind of job cairn has: the one place they are listed,
// for the daemon, the mount's .jobs tree and the foreground commands.
func Kinds() []jobs.Kind {
	return []jobs.Kind{verify.Kind{}, tape.ExportKind{}, tape.RestoreKind{},
		prune.Kind{}, gc.Kind{}, storesync.Kind{}, backup.Kind{}}
}

// NewManager returns a job manager of s with every kind registered;
// its jobs stop when ctx ends.
func NewManager(ctx context.Context, s *store.Store, logger *slog.Logger) (*jobs.Manager, error) {
	m := jobs.NewManager(ctx, s, logger)
	for _, k := range Kinds() {
		if err := m.Register(k); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}
