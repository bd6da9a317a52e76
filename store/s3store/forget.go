package s3store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/internal/printable"
	"github.com/cairnfs/cairn/store/objstore"
)

// Forgetting a snapshot of a remote store (rule 3 of the safety
// protocol, docs/design/store.md), with the snapshot locked exclusively here: a
// protected one (the bucket's marker) is refused; the manifest object is
// deleted first, then the writer leases are listed: when a live writer
// names the snapshot as its base, the manifest is put back and the
// forget refused (ErrSnapshotInUse); otherwise the snapshot's other
// objects are deleted, then the local directory. A writer names its base
// in its lease before it checks that the base's manifest is there, so
// one of the two sees the other.

// deleteBatch is how many keys one Delete call takes.
const deleteBatch = 1000

// forgetRemote removes snap's objects from the bucket.
func (s *rstore) forgetRemote(ctx context.Context, snap store.Snapshot) error {
	if err := s.remoteProtected(ctx, snap); err != nil {
		return err
	}
	key := store.SnapshotFile(snap, store.ManifestName)
	blob, _, err := s.remote.bucket.Get(ctx, key, store.MaxManifestBlob, nil)
	if errors.Is(err, objstore.ErrNotExist) {
		blob = nil // unfinished, or gone already: nobody builds on it
	} else if err != nil {
		return fmt.Errorf("forget %s: read manifest %s: %w", snap, key, err)
	}
	if blob != nil {
		if err := s.remote.bucket.Delete(ctx, key); err != nil {
			return fmt.Errorf("forget %s: delete manifest %s: %w", snap, key, err)
		}
		if err := s.refuseForget(ctx, snap); err != nil {
			return s.putManifestBack(ctx, snap, blob, err)
		}
	}
	return s.deleteSnapshotObjects(ctx, snap)
}

// refuseForget tells, once snap's manifest is deleted from the bucket,
// whether the forget must be undone: a live writer builds on snap, or a
// protection came meanwhile.
func (s *rstore) refuseForget(ctx context.Context, snap store.Snapshot) error {
	w, err := s.remote.writerOn(ctx, snap)
	if err != nil {
		return err
	}
	if w != nil {
		h := w.Holder
		return fmt.Errorf("forget %s: %w: writer %s builds on it (%s, PID %d on host %s, since %s)", snap,
			store.ErrSnapshotInUse, w.Key, printable.String(h.Command, printable.MaxCommand), h.PID, printable.String(h.Host, printable.MaxCommand),
			h.Start.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return s.remoteProtected(ctx, snap)
}

// putManifestBack undoes the manifest's deletion (cause: why). Failing to
// leaves the snapshot unfinished in the bucket, its files kept: the
// chunks a writer building on it reuses stay marked by GC.
func (s *rstore) putManifestBack(ctx context.Context, snap store.Snapshot, blob []byte, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseReleaseTimeout)
	defer cancel()
	key := store.SnapshotFile(snap, store.ManifestName)
	if _, err := s.remote.bucket.Put(ctx, key, objstore.Cond{IfAbsent: true}, blob); err != nil &&
		!errors.Is(err, objstore.ErrPrecondition) {
		return fmt.Errorf("%w; putting its manifest %s back failed, the snapshot is left unfinished: %w", cause, key, err)
	}
	return cause
}

// writerOn returns a live writer lease that names snap among its bases
// (nil when none does).
func (r *remote) writerOn(ctx context.Context, snap store.Snapshot) (*objstore.LeaseInfo, error) {
	live, err := r.liveWriters(ctx)
	if err != nil {
		return nil, err
	}
	name := snap.String()
	for i := range live {
		if slices.Contains(leaseBases(live[i]), name) {
			return &live[i], nil
		}
	}
	return nil, nil
}

// remoteProtected is ErrProtected when the bucket has snap's marker.
func (s *rstore) remoteProtected(ctx context.Context, snap store.Snapshot) error {
	_, err := s.remote.bucket.Head(ctx, store.SnapshotFile(snap, store.ProtectedName))
	if err == nil {
		return fmt.Errorf("forget %s: %w", snap, store.ErrProtected)
	}
	if errors.Is(err, objstore.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("forget %s: %w", snap, err)
}

// deleteSnapshotObjects deletes every object under snap's prefix.
func (s *rstore) deleteSnapshotObjects(ctx context.Context, snap store.Snapshot) error {
	return s.deletePrefix(ctx, store.SnapshotFile(snap, ""))
}

// deletePrefix deletes the objects under prefix, in batches.
func (s *rstore) deletePrefix(ctx context.Context, prefix string) error {
	batch := make([]string, 0, deleteBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.remote.bucket.Delete(ctx, batch...)
		batch = batch[:0]
		if err != nil {
			return fmt.Errorf("delete %s…: %w", prefix, err)
		}
		return nil
	}
	for obj, err := range s.remote.bucket.List(ctx, prefix, "") {
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		if batch = append(batch, obj.Key); len(batch) == deleteBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// canForgetRemote is CanForget's check of the bucket: the marker and the
// writers building on snap.
func (s *rstore) canForgetRemote(ctx context.Context, snap store.Snapshot) error {
	if err := s.remoteProtected(ctx, snap); err != nil {
		return err
	}
	return s.refuseForget(ctx, snap)
}

// forgetGroupRemote deletes what the bucket still has of g once its
// snapshots are forgotten, holding g's lease (no backup of g runs): the
// files of unfinished snapshots. A manifest there is a snapshot not
// mirrored yet: then nothing is deleted (a first listing looks for one).
func (s *rstore) forgetGroupRemote(ctx context.Context, g store.Group) error {
	prefix := groupKey(g)
	for obj, err := range s.remote.bucket.List(ctx, prefix, "") {
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		if strings.HasSuffix(obj.Key, "/"+store.ManifestName) {
			return fmt.Errorf("forget group %s: %w: the bucket has snapshot %s, which this host has not mirrored yet",
				g, store.ErrLocked, strings.TrimSuffix(obj.Key, "/"+store.ManifestName))
		}
	}
	return s.deletePrefix(ctx, prefix)
}
