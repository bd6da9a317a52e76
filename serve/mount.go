package serve

import (
	"context"
	"log/slog"
	"os"

	cfs "github.com/cairnfs/cairn/fs"
)

// mounted is the store's mount (nil: none).
type mounted struct {
	srv    *cfs.Server
	cancel context.CancelFunc
}

// mount mounts the store on Options.Mount, read-only, with the file
// archives as trees and the daemon's .jobs tree, as `cairn mount` does
// with its defaults.
func (d *Daemon) mount() (*mounted, error) {
	if d.opt.Mount == "" {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := cfs.Mount(ctx, d.opt.Mount, cfs.Options{Store: d.opt.Store, Log: d.opt.Logger, Trees: cfs.PxarTrees{},
		Extra: []cfs.RootEntry{cfs.JobsEntry(d.mgr, uint32(os.Getuid()), uint32(os.Getgid()), 0)}})
	if err != nil {
		cancel()
		return nil, err
	}
	d.opt.Logger.Info("mounted", "dir", srv.Dir())
	return &mounted{srv: srv, cancel: cancel}, nil
}

// done is closed when the mount ends (never without a mount).
func (m *mounted) done() <-chan struct{} {
	if m == nil {
		return nil
	}
	return m.srv.Done()
}

// unmount unmounts (after the jobs have stopped).
func (m *mounted) unmount(log *slog.Logger) {
	if m == nil {
		return
	}
	if err := m.srv.Unmount(); err != nil {
		log.Error("unmount", "dir", m.srv.Dir(), "err", err)
	}
	m.cancel()
}

// MountStats are the mount's counters (cache hits and misses, bytes
// served), and whether the store is mounted now.
func (d *Daemon) MountStats() (cfs.Stats, bool) {
	d.mu.Lock()
	m := d.mnt
	d.mu.Unlock()
	if m == nil {
		return cfs.Stats{}, false
	}
	return m.srv.Stats(), true
}
