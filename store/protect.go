package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ProtectedName is the marker PBS uses for a protected snapshot: an empty
// file in the snapshot directory. Nothing removes a protected snapshot.
const ProtectedName = ".protected"

// ErrProtected is the refusal to remove a protected snapshot.
var ErrProtected = errors.New("snapshot is protected (cairn unprotect to allow its removal)")

// IsProtected reports whether the snapshot carries the protection marker.
// Anything by that name counts (a symlink too): removal errs on the side
// of keeping.
func (s *Store) IsProtected(snap Snapshot) bool {
	_, err := os.Lstat(filepath.Join(s.SnapshotPath(snap), ProtectedName))
	return err == nil
}

// SetProtected sets or clears the snapshot's protection marker. It holds
// the snapshot's lock shared meanwhile, so a removal that has checked the
// marker (holding the lock exclusively) cannot miss a new one.
func (s *Store) SetProtected(ctx context.Context, snap Snapshot, on bool) error {
	if err := snap.Group.Check(); err != nil {
		return err
	}
	if err := s.CheckGroupDirs(snap.Group); err != nil {
		return fmt.Errorf("protect %s: %w", snap, err)
	}
	l, err := s.LockSnapshot(ctx, snap, false)
	if err != nil {
		return fmt.Errorf("protect: %w", err)
	}
	defer l.Unlock()
	if err := s.meta.Protect(ctx, snap, on); err != nil {
		return err
	}
	dirfd := int(l.f.Fd())
	if on {
		fd, err := unix.Openat(dirfd, ProtectedName, unix.O_CREAT|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return fmt.Errorf("protect %s: %s: %w", snap, ProtectedName, err)
		}
		unix.Close(fd)
	} else {
		err = unix.Unlinkat(dirfd, ProtectedName, 0)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("unprotect %s: %s: %w", snap, ProtectedName, err)
		}
	}
	// the marker's presence or absence survives a crash
	if err := unix.Fsync(dirfd); err != nil {
		return fmt.Errorf("protect %s: sync: %w", snap, err)
	}
	return nil
}
