package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
	"golang.org/x/sync/errgroup"
)

// Publishing a remote store's snapshots (rule 5 of the safety protocol,
// doc.go): a backup writes its files into the local directory as on a
// local store; Finish uploads each of them, then the manifest, last, and
// only then writes the local manifest. A manifest update (verify state,
// notes) is a conditional put on the manifest the bucket has, and the
// protection marker is an object too.

// uploadWorkers bounds the snapshot files a Finish uploads at once.
const uploadWorkers = 4

// finishRemote publishes the backup's snapshot: its files, then m.
// Whatever fails first, no manifest is in the bucket or the directory.
func (b *Backup) finishRemote(m *Manifest) error {
	ctx, stop := leaseContext(b.ctx, b.leases()...)
	defer stop()
	if err := leaseLost(b.leases()...); err != nil {
		return fmt.Errorf("snapshot %s: %w", b.snap, err)
	}
	err := b.s.uploadFiles(ctx, b.snap, m.Files)
	if err == nil {
		// checked again right before the manifest: a lease lost since
		err = leaseLost(b.leases()...)
	}
	if err != nil {
		b.s.dropUploads(b.snap, m.Files)
		return fmt.Errorf("snapshot %s: %w (unfinished: no manifest written)", b.snap, ctxCause(ctx, err))
	}
	return b.s.writeManifest(ctx, b.snap, m, objstore.Cond{IfAbsent: true})
}

// leases are the backup's leases in the bucket: its writer's and its
// group's.
func (b *Backup) leases() []*objstore.Lease {
	out := []*objstore.Lease{b.writer.lease}
	for _, l := range b.locks {
		if l.lease != nil {
			out = append(out, l.lease)
		}
	}
	return out
}

// ctxCause prefers ctx's cause (a lost lease) to the error it caused.
func ctxCause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w (%w)", c, err)
	}
	return err
}

// uploadFiles puts the snapshot's files into the bucket, a few at a time.
func (s *Store) uploadFiles(ctx context.Context, snap Snapshot, files []FileInfo) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(uploadWorkers)
	for _, f := range files {
		g.Go(func() error { return s.putSnapshotFile(ctx, snap, f.Filename) })
	}
	return g.Wait()
}

// putSnapshotFile uploads one file of the snapshot directory.
func (s *Store) putSnapshotFile(ctx context.Context, snap Snapshot, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	path := filepath.Join(s.SnapshotPath(snap), name)
	key := snapshotFile(snap, name)
	info, err := putLocalFile(ctx, s.remote.bucket, key, path, fileLimit(name))
	if err != nil {
		return fmt.Errorf("upload %s: %w", key, err)
	}
	setMirrorTime(path, info)
	return nil
}

// dropUploads deletes what a failed Finish uploaded: the snapshot has no
// manifest, and no other writer writes it (the group's lease). Failing
// to leaves an unfinished snapshot in the bucket, which its forget
// removes.
func (s *Store) dropUploads(snap Snapshot, files []FileInfo) {
	ctx, cancel := context.WithTimeout(context.Background(), leaseReleaseTimeout)
	defer cancel()
	keys := make([]string, 0, len(files))
	for _, f := range files {
		if checkName(f.Filename) == nil {
			keys = append(keys, snapshotFile(snap, f.Filename))
		}
	}
	s.remote.bucket.Delete(ctx, keys...)
}

// putManifest puts a manifest blob under cond and then writes it into the
// snapshot directory: the bucket first, so that no local manifest names
// a snapshot the bucket does not have.
func (s *Store) putManifest(ctx context.Context, snap Snapshot, blob []byte, cond objstore.Cond) error {
	key := snapshotFile(snap, ManifestName)
	info, err := s.remote.bucket.Put(ctx, key, cond, blob)
	if errors.Is(err, objstore.ErrPrecondition) && cond.IfAbsent {
		return fmt.Errorf("snapshot %s: manifest %s: %w in the bucket", snap, key, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("snapshot %s: upload manifest %s: %w", snap, key, err)
	}
	path := filepath.Join(s.SnapshotPath(snap), ManifestName)
	if err := writeFileAtomic(path, blob); err != nil {
		return err
	}
	setMirrorTime(path, info)
	return nil
}

// manifestUpdateTries bounds the retries of an update that another host's
// update of the same manifest got ahead of.
const manifestUpdateTries = 8

// updateManifestRemote is UpdateManifest on a remote store: the manifest
// the bucket has is read, changed and put back only if it is still that
// version (If-Match), so that two hosts' updates do not lose one another
// and a manifest a forget deleted is not brought back (ErrNotFound).
func (s *Store) updateManifestRemote(ctx context.Context, snap Snapshot, fn func(*Manifest) error) error {
	key := snapshotFile(snap, ManifestName)
	for range manifestUpdateTries {
		blob, info, err := s.remote.bucket.Get(ctx, key, maxManifestBlob, nil)
		if errors.Is(err, objstore.ErrNotExist) {
			return fmt.Errorf("snapshot %s: %w: no manifest in the bucket", snap, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("snapshot %s: read manifest %s: %w", snap, key, err)
		}
		m, err := decodeManifest("bucket "+s.remote.cfg.Bucket+": "+key, blob, snap)
		if err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
		nb, err := encodeManifest(snap, m)
		if err != nil {
			return err
		}
		err = s.putManifest(ctx, snap, nb, objstore.Cond{IfMatch: info.ETag})
		if !errors.Is(err, objstore.ErrPrecondition) {
			return err
		}
	}
	return fmt.Errorf("snapshot %s: manifest %s changed by others %d times while it was updated: %w",
		snap, key, manifestUpdateTries, ErrLocked)
}

// setProtectedRemote puts or deletes the snapshot's protection marker in
// the bucket, before the local one changes. A marker put on a snapshot
// whose manifest a forget deleted meanwhile is taken back (the forget
// checked for it first: rule 3's order, for protection).
func (s *Store) setProtectedRemote(ctx context.Context, snap Snapshot, on bool) error {
	key := snapshotFile(snap, ProtectedName)
	if !on {
		if err := s.remote.bucket.Delete(ctx, key); err != nil {
			return fmt.Errorf("unprotect %s: %s: %w", snap, key, err)
		}
		return nil
	}
	if _, err := s.remote.bucket.Put(ctx, key, objstore.Cond{}); err != nil {
		return fmt.Errorf("protect %s: %s: %w", snap, key, err)
	}
	_, err := s.remote.bucket.Head(ctx, snapshotFile(snap, ManifestName))
	if errors.Is(err, objstore.ErrNotExist) {
		s.remote.bucket.Delete(ctx, key)
		return fmt.Errorf("protect %s: %w: its manifest is gone from the bucket (forgotten)", snap, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("protect %s: %w", snap, err)
	}
	return nil
}

// setMirrorTime gives a mirrored file the LastModified of its object, by
// which the next refresh knows it unchanged (a zero time leaves it: the
// refresh downloads the file again).
func setMirrorTime(path string, info objstore.ObjectInfo) {
	if !info.LastModified.IsZero() {
		os.Chtimes(path, time.Time{}, info.LastModified)
	}
}
