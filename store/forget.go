package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnfs/cairn/store/internal/fsutil"
	"golang.org/x/sys/unix"
)

// trashPrefix starts the hidden name a snapshot or group directory is
// renamed to before it is removed: the removal is one rename, and a
// removal cut short leaves a directory no reader (cairn's or PBS's, which
// list only valid names) sees, which CleanTrash finishes.
const trashPrefix = ".trash-"

// ForgetSnapshot removes a snapshot, finished or not. It takes the
// snapshot's lock exclusively without waiting, so a snapshot a backup
// writes or builds on, or a verify, tape export or restore reads, is
// refused with a *LockedError (ErrLocked); a protected one is refused
// with ErrProtected. The directory is renamed to a hidden name first,
// then removed (never through a symlink).
func (s *Store) ForgetSnapshot(ctx context.Context, snap Snapshot) error {
	if err := snap.Group.Check(); err != nil {
		return err
	}
	if err := s.CheckGroupDirs(snap.Group); err != nil {
		return fmt.Errorf("forget %s: %w", snap, err)
	}
	l, err := s.lockSnapshot(ctx, snap, true, 0)
	if err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	defer l.Unlock()
	if s.IsProtected(snap) {
		return fmt.Errorf("forget %s: %w", snap, ErrProtected)
	}
	dir := s.SnapshotPath(snap)
	if !l.sameFile(dir) {
		return fmt.Errorf("forget %s: %w: the directory changed while it was locked", snap, ErrLocked)
	}
	if err := s.meta.Forget(ctx, snap); err != nil {
		return err
	}
	return removeViaTrash(dir, snap.TimeString())
}

// CanForget tells, changing nothing, whether ForgetSnapshot would remove
// snap now: nil, or the error it would fail with (ErrNotFound,
// ErrLocked, ErrProtected, ErrBadName). For dry runs.
func (s *Store) CanForget(ctx context.Context, snap Snapshot) error {
	if err := snap.Group.Check(); err != nil {
		return err
	}
	if err := s.CheckGroupDirs(snap.Group); err != nil {
		return fmt.Errorf("forget %s: %w", snap, err)
	}
	l, err := s.lockSnapshot(ctx, snap, true, 0) // a lock changes no file
	if err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	defer l.Unlock()
	if s.IsProtected(snap) {
		return fmt.Errorf("forget %s: %w", snap, ErrProtected)
	}
	return s.meta.CanForget(ctx, snap)
}

// removeViaTrash renames dir to a hidden trash name beside it, then
// removes that. Once the rename is done the removal has happened for
// every reader; a failure after it is reported but leaves only trash.
func removeViaTrash(dir, name string) error {
	var rnd [6]byte
	rand.Read(rnd[:])
	trash := filepath.Join(filepath.Dir(dir), trashPrefix+name+"-"+hex.EncodeToString(rnd[:]))
	if err := os.Rename(dir, trash); err != nil {
		return fmt.Errorf("remove %s: %w", dir, notFound(err))
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("remove %s (renamed to %s, removed by the next gc): %w", dir, trash, err)
	}
	return nil
}

// ForgetGroup removes every snapshot of a group and then the group
// itself. It holds the group's backup lock meanwhile, so no backup of
// the group runs. Snapshots that are protected or locked are kept (the
// error names each); the group stays while any snapshot does. removed
// lists what was removed.
func (s *Store) ForgetGroup(ctx context.Context, g Group) (removed []Snapshot, err error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if err := s.CheckGroupDirs(g); err != nil {
		return nil, fmt.Errorf("forget: %w", err)
	}
	gl, err := s.LockGroup(ctx, g)
	if err != nil {
		return nil, fmt.Errorf("forget: %w", err)
	}
	defer gl.Unlock()
	if err := s.meta.RefreshGroup(ctx, g); err != nil { // a remote store: the bucket's snapshots of g
		return nil, fmt.Errorf("forget: %w", err)
	}
	snaps, err := s.Snapshots(g)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, si := range snaps {
		if err := s.ForgetSnapshot(ctx, si.Snapshot); err != nil {
			errs = append(errs, &SnapshotError{Snapshot: si.Snapshot, Err: err})
			continue
		}
		removed = append(removed, si.Snapshot)
	}
	if len(errs) > 0 {
		return removed, errors.Join(errs...)
	}
	if left, err := s.Snapshots(g); err != nil || len(left) > 0 {
		return removed, fmt.Errorf("forget group %s: %d snapshots appeared meanwhile: %w", g, len(left), ErrLocked)
	}
	if err := s.meta.ForgetGroup(ctx, g); err != nil {
		return removed, err
	}
	return removed, removeViaTrash(s.GroupPath(g), g.ID)
}

// SnapshotError is the failed removal of one snapshot of a group
// (ForgetGroup joins one per snapshot it kept).
type SnapshotError struct {
	Snapshot Snapshot
	Err      error
}

func (e *SnapshotError) Error() string { return e.Err.Error() }
func (e *SnapshotError) Unwrap() error { return e.Err }

// CleanTrash removes what killed removals left (hidden trash directories
// in type and group directories) and returns how many it removed. A
// trash directory a removal still holds locked is left to it.
func (s *Store) CleanTrash(ctx context.Context) (int, error) {
	nss, err := s.Namespaces("")
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, ns := range nss {
		for _, typ := range []string{TypeCT, TypeHost, TypeVM} {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			dir := filepath.Join(s.root, ns.Rel(), typ)
			c, err := cleanTrashIn(ctx, dir)
			n += c
			errs = append(errs, err)
			names, _ := fsutil.ReadNames(dir)
			for _, id := range names {
				if idRE.MatchString(id) {
					c, err := cleanTrashIn(ctx, filepath.Join(dir, id))
					n += c
					errs = append(errs, err)
				}
			}
		}
	}
	return n, errors.Join(errs...)
}

func cleanTrashIn(ctx context.Context, dir string) (int, error) {
	names, err := fsutil.ReadNames(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("clean %s: %w", dir, err)
	}
	n := 0
	for _, name := range names {
		if !strings.HasPrefix(name, trashPrefix) {
			continue
		}
		path := filepath.Join(dir, name)
		f, err := openDirNoFollow(path)
		if err != nil {
			continue // not a directory of ours
		}
		l, err := flockFile(ctx, f, true, 0, false)
		if err != nil {
			continue // a removal is still at it
		}
		err = os.RemoveAll(path)
		l.Unlock()
		if err != nil {
			return n, fmt.Errorf("clean %s: %w", path, err)
		}
		n++
	}
	return n, nil
}
