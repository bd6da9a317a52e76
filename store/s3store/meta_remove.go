package s3store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/internal/fsutil"
	"github.com/cairnfs/cairn/store/objstore"
)

// What a refresh of a remote store's mirror removes (meta_refresh.go):
// the local snapshots that have left the bucket, each confirmed gone by a
// request of its own (it may have come back since the listing), and never
// one locked here.

// removeUnseenGroups removes the local finished snapshots of the groups
// the bucket has no object of, and then such a group's directory when no
// snapshot is left in it.
func (r *refresher) removeUnseenGroups() error {
	nss, err := r.s.Namespaces("")
	if err != nil {
		return err
	}
	for _, ns := range nss {
		groups, err := r.s.Groups(ns)
		if err != nil {
			return err
		}
		for _, g := range groups {
			if !r.seen[groupKey(g)] {
				if err := r.removeVanished(g, nil); err != nil {
					return err
				}
				r.s.DropEmptyGroupDir(r.ctx, g, newGroupAge)
			}
		}
	}
	return nil
}

// removeVanished removes g's local snapshots that have a manifest while
// times (the bucket's snapshots: true when finished) has none, each after
// a HEAD that confirms it is gone (it may have come since the listing),
// and the unfinished ones the refresh made (mirrorMarker) that the
// bucket has nothing of.
func (r *refresher) removeVanished(g store.Group, times map[string]bool) error {
	if r.s.CheckGroupDirs(g) != nil {
		return nil // a symlink on the way (refused when mirrored), or gone
	}
	names, err := fsutil.ReadNames(r.s.GroupPath(g))
	if err != nil {
		return nil
	}
	slices.Sort(names)
	for _, n := range names {
		t, err := store.ParseTime(n)
		finished, inBucket := times[n]
		if err != nil || finished {
			continue
		}
		snap := store.Snapshot{Group: g, Time: t}
		dir := r.s.SnapshotPath(snap)
		_, err = os.Lstat(filepath.Join(dir, store.ManifestName))
		unfinished := err != nil
		if unfinished {
			// a backup starting or one that died here stays; what the
			// mirror made goes with the bucket's
			if _, err := os.Lstat(filepath.Join(dir, mirrorMarker)); err != nil || inBucket {
				continue
			}
		}
		if err := r.s.removeForgotten(r.ctx, snap, unfinished); err != nil {
			return err
		}
	}
	return nil
}

// removeForgotten removes the local copy of a snapshot that has left the
// bucket (its manifest; for an unfinished one, all of it), unless it is
// locked here or the bucket has it again (it may have come since the
// listing).
func (s *rstore) removeForgotten(ctx context.Context, snap store.Snapshot, unfinished bool) error {
	gone, err := s.remote.snapshotGone(ctx, snap, unfinished)
	if err != nil {
		return fmt.Errorf("refresh: snapshot %s: %w", snap, err)
	}
	if !gone {
		return nil
	}
	_, err = s.DropSnapshotDir(ctx, snap) // in use here: the next refresh removes it
	return err
}

// snapshotGone reports whether the bucket has no manifest of snap and,
// when all is true, no object of it at all.
func (r *remote) snapshotGone(ctx context.Context, snap store.Snapshot, all bool) (bool, error) {
	_, err := r.bucket.Head(ctx, store.SnapshotFile(snap, store.ManifestName))
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, objstore.ErrNotExist) {
		return false, err
	}
	if !all {
		return true, nil
	}
	for _, err := range r.bucket.List(ctx, store.SnapshotFile(snap, ""), "") {
		return false, err // an object (or an error): not gone
	}
	return true, nil
}

// newGroupAge is how old an empty group directory must be before a
// refresh removes it: one younger may be a backup's that is starting
// (made, its lock not yet taken).
const newGroupAge = time.Minute
