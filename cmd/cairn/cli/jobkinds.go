package cli

import (
	"log/slog"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/serve"
	"github.com/cairnfs/cairn/store"
)

// jobManager returns a job manager for s with every job kind
// (serve.Kinds, the one place they are listed), logging to logger.
func (a *app) jobManager(s *store.Store, logger *slog.Logger) (*jobs.Manager, error) {
	return serve.NewManager(a.ctx, s, logger)
}
