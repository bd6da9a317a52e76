package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Lock is a held advisory lock (flock on a file of its own descriptor).
type Lock struct {
	f *os.File
}

// Unlock releases the lock; it is safe to call more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor drops the flock
	l.f = nil
	return err
}

// lockPoll is how often a waiting lock is retried.
const lockPoll = 20 * time.Millisecond

// flock takes a lock on path (created if missing). With wait, it retries
// until ctx ends; otherwise it fails at once with ErrLocked.
func flock(ctx context.Context, path string, exclusive, wait bool) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return &Lock{f: f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !wait {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ErrLocked)
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("lock %s: %w (%w)", path, ErrLocked, ctx.Err())
		case <-t.C:
		}
	}
}

// LockShared takes the store's process lock shared, as every writer of
// indexes does; GC's exclusive hold keeps it out. It waits for ctx.
func (s *Store) LockShared(ctx context.Context) (*Lock, error) {
	return flock(ctx, filepath.Join(s.root, lockFile), false, true)
}

// LockExclusive takes the store's process lock exclusively (GC). It fails
// at once with ErrLocked while any writer holds it shared.
func (s *Store) LockExclusive(ctx context.Context) (*Lock, error) {
	return flock(ctx, filepath.Join(s.root, lockFile), true, false)
}

// LockGroup takes the per-group backup lock: one backup per group at a
// time. It fails at once with ErrLocked.
func (s *Store) LockGroup(ctx context.Context, g Group) (*Lock, error) {
	dir := s.GroupPath(g)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lock group %s: %w", g, err)
	}
	l, err := flock(ctx, filepath.Join(dir, ".backup.lck"), true, false)
	if err != nil {
		return nil, fmt.Errorf("group %s: %w", g, err)
	}
	return l, nil
}

// manifestLockTimeout bounds the wait for a snapshot's manifest lock.
const manifestLockTimeout = 5 * time.Second

// LockManifest takes a snapshot's manifest update lock, waiting up to five
// seconds as PBS does.
func (s *Store) LockManifest(ctx context.Context, snap Snapshot) (*Lock, error) {
	ctx, cancel := context.WithTimeout(ctx, manifestLockTimeout)
	defer cancel()
	return flock(ctx, filepath.Join(s.SnapshotPath(snap), ".index.json.lck"), true, true)
}
