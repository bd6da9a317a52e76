package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// LockSnapshot takes a flock on the snapshot's directory itself, as PBS
// does: shared while a snapshot is read and must stay (a backup's
// previous snapshot, verify, tape export, restore), exclusive while it is
// written (a running backup's own snapshot) or removed. It waits up to
// the store's lock wait; then it fails with a *LockedError (ErrLocked).
// A missing snapshot is ErrNotFound, and so is one removed while its lock
// was waited for; a snapshot path that is not a directory (a symlink,
// say) is refused.
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
	if !l.sameFile(s.SnapshotPath(snap)) {
		// a removal held it while we waited, and renamed it away
		l.Unlock()
		return nil, fmt.Errorf("snapshot %s: %w: removed while its lock was waited for", snap, ErrNotFound)
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

// CheckGroupDirs refuses a group whose directory, or a directory on the
// way to it from the store's root (namespaces, type), is not a real
// directory: a symlink there would take a removal, a marker or a
// listing meant for the store outside it (ErrBadName; a missing one is
// ErrNotFound). The last component of a snapshot is checked by its open.
func (s *Store) CheckGroupDirs(g Group) error {
	path := s.root
	for _, part := range strings.Split(strings.TrimSuffix(g.NS.Rel()+g.Type+"/"+g.ID, "/"), "/") {
		path = filepath.Join(path, part)
		fi, err := os.Lstat(path)
		if err != nil {
			return fmt.Errorf("group %s: %w", g, notFound(err))
		}
		if !fi.IsDir() {
			return fmt.Errorf("group %s: %s is not a directory (a symlink or a file): %w", g, path, ErrBadName)
		}
	}
	return nil
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
