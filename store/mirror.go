package store

import (
	"context"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/store/internal/fsutil"
)

// What a store of another kind (store/s3store) does to the snapshot
// directories it mirrors when they have left where they are kept: it
// removes them, as ForgetSnapshot does, but only when nothing here uses
// them.

// DropSnapshotDir removes snap's directory unless it is locked here (not
// waited for) or was replaced meanwhile; ok tells it was removed.
func (s *Store) DropSnapshotDir(ctx context.Context, snap Snapshot) (ok bool, err error) {
	l, err := s.lockSnapshot(ctx, snap, true, 0)
	if err != nil {
		return false, nil // in use here
	}
	defer l.Unlock()
	dir := s.SnapshotPath(snap)
	if !l.sameFile(dir) {
		return false, nil
	}
	return true, removeViaTrash(dir, snap.TimeString())
}

// DropEmptyGroupDir removes g's directory when it holds no snapshot
// directory, is older than minAge (one younger may be a backup's that
// is starting: made, its lock not yet taken), and its lock is free (not
// waited for: a backup of the group starting here keeps it).
func (s *Store) DropEmptyGroupDir(ctx context.Context, g Group, minAge time.Duration) {
	dir := s.GroupPath(g)
	if s.CheckGroupDirs(g) != nil || !fsutil.OldFile(dir, minAge) {
		return
	}
	l, err := s.flock(ctx, filepath.Join(dir, ".backup.lck"), true, 0)
	if err != nil {
		return
	}
	defer l.Unlock()
	if snaps, err := s.Snapshots(g); err != nil || len(snaps) > 0 {
		return
	}
	removeViaTrash(dir, g.ID)
}
