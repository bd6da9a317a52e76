package store

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// LockSnapshot takes a flock on the snapshot's directory itself, as PBS
// does: shared while a snapshot is read and must stay (a backup's
// previous snapshot, verify, tape export, restore), exclusive while it is
// written (a running backup's own snapshot) or removed. It waits up to
// the store's lock wait; then it fails with a *LockedError (ErrLocked).
// A missing snapshot is ErrNotFound; a snapshot path that is not a
// directory (a symlink, say) is refused.
func (s *Store) LockSnapshot(ctx context.Context, snap Snapshot, exclusive bool) (*Lock, error) {
	return s.lockSnapshot(ctx, snap, exclusive, s.lockWait)
}

func (s *Store) lockSnapshot(ctx context.Context, snap Snapshot, exclusive bool, wait time.Duration) (*Lock, error) {
	f, err := openDirNoFollow(s.SnapshotPath(snap))
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", snap, err)
	}
	l, err := flockFile(ctx, f, exclusive, wait, false)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", snap, err)
	}
	return l, nil
}

// openDirNoFollow opens a directory for a lock, never through a symlink.
func openDirNoFollow(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return nil, fmt.Errorf("%s: not a directory (a symlink or a file): %w", path, ErrBadName)
		}
		return nil, fmt.Errorf("%s: %w", path, notFound(err))
	}
	return os.NewFile(uintptr(fd), path), nil
}

// sameFile reports whether the locked file is still the one at path.
func (l *Lock) sameFile(path string) bool {
	if l == nil || l.f == nil {
		return false
	}
	var a, b unix.Stat_t
	if unix.Fstat(int(l.f.Fd()), &a) != nil || unix.Lstat(path, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}
