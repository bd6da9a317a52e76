package main

import (
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// jobManager returns a job manager for s with every job kind cairn has,
// the same for the mount's .jobs tree and for foreground commands.
func (a *app) jobManager(s *store.Store) (*jobs.Manager, error) {
	m := jobs.NewManager(a.ctx, s, a.logger)
	for _, k := range []jobs.Kind{&jobs.VerifyKind{}, jobs.TapeExportKind{}, jobs.TapeRestoreKind{}} {
		if err := m.Register(k); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}
