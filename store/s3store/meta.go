package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/internal/fsutil"
	"github.com/cairnfs/cairn/store/objstore"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// Publishing a remote store's snapshots (rule 5 of the safety protocol,
// docs/design/store.md): a backup writes its files into the local directory as on a
// local store; Finish uploads each of them, then the manifest, last, and
// only then writes the local manifest. A manifest update (verify state,
// notes) is a conditional put on the manifest the bucket has, and the
// protection marker is an object too.

// uploadWorkers bounds the snapshot files a Finish uploads at once.
const uploadWorkers = 4

// publish publishes backup b's snapshot: its files, then m.
// Whatever fails first, no manifest is in the bucket or the directory.
func (s *rstore) publish(ctx context.Context, b *store.Backup, m *store.Manifest) error {
	snap := b.Snapshot()
	ctx, stop := leaseContext(ctx, b.Leases()...)
	defer stop()
	if err := leaseLost(b.Leases()...); err != nil {
		return fmt.Errorf("snapshot %s: %w", snap, err)
	}
	// the group's lease keeps other hosts' backups of the group out, and
	// StartBackup saw the bucket's snapshots of it: this is insurance
	// against overwriting a finished snapshot's files all the same
	key := store.SnapshotFile(snap, store.ManifestName)
	if _, err := s.remote.bucket.Head(ctx, key); !errors.Is(err, objstore.ErrNotExist) {
		if err == nil {
			err = fmt.Errorf("manifest %s: %w in the bucket", key, store.ErrExists)
		}
		return fmt.Errorf("snapshot %s: %w (unfinished: no manifest written)", snap, err)
	}
	tags, err := s.uploadFiles(ctx, snap, m.Files)
	if err == nil {
		// checked again right before the manifest: a lease lost since
		err = leaseLost(b.Leases()...)
	}
	if err != nil {
		s.dropUploads(snap, m.Files)
		return fmt.Errorf("snapshot %s: %w (unfinished: no manifest written)", snap, ctxCause(ctx, err))
	}
	blob, err := store.EncodeManifest(snap, m)
	if err != nil {
		return err
	}
	return s.putManifest(ctx, snap, blob, objstore.Cond{IfAbsent: true}, tags)
}

// ctxCause prefers ctx's cause (a lost lease) to the error it caused.
func ctxCause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w (%w)", c, err)
	}
	return err
}

// uploadFiles puts the snapshot's files into the bucket, a few at a
// time, and returns their ETags by name.
func (s *rstore) uploadFiles(ctx context.Context, snap store.Snapshot, files []store.FileInfo) (map[string]string, error) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(uploadWorkers)
	var mu sync.Mutex
	tags := make(map[string]string, len(files)+1)
	for _, f := range files {
		g.Go(func() error {
			tag, err := s.putSnapshotFile(ctx, snap, f.Filename)
			mu.Lock()
			tags[f.Filename] = tag
			mu.Unlock()
			return err
		})
	}
	return tags, g.Wait()
}

// putSnapshotFile uploads one file of the snapshot directory.
func (s *rstore) putSnapshotFile(ctx context.Context, snap store.Snapshot, name string) (etag string, err error) {
	if err := store.CheckArchiveName(name); err != nil {
		return "", err
	}
	path := filepath.Join(s.SnapshotPath(snap), name)
	key := store.SnapshotFile(snap, name)
	info, err := putLocalFile(ctx, s.remote.bucket, key, path, fileLimit(name))
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", key, err)
	}
	return info.ETag, nil
}

// dropUploads deletes what a failed Finish uploaded: the snapshot has no
// manifest, and no other writer writes it (the group's lease). Failing
// to leaves an unfinished snapshot in the bucket, which its forget
// removes.
func (s *rstore) dropUploads(snap store.Snapshot, files []store.FileInfo) {
	ctx, cancel := context.WithTimeout(context.Background(), leaseReleaseTimeout)
	defer cancel()
	keys := make([]string, 0, len(files))
	for _, f := range files {
		if store.CheckArchiveName(f.Filename) == nil {
			keys = append(keys, store.SnapshotFile(snap, f.Filename))
		}
	}
	s.remote.bucket.Delete(ctx, keys...)
}

// putManifest puts a manifest blob under cond and then writes it into the
// snapshot directory: the bucket first, so that no local manifest names
// a snapshot the bucket does not have. Then the local files this host
// put (tags: ETags by name, the manifest's added) get their objects'
// times, so that the next refresh takes them as they are.
func (s *rstore) putManifest(ctx context.Context, snap store.Snapshot, blob []byte, cond objstore.Cond, tags map[string]string) error {
	key := store.SnapshotFile(snap, store.ManifestName)
	if cond.IfAbsent {
		if err := s.remote.notePublishing(ctx, snap); err != nil {
			return fmt.Errorf("snapshot %s: %w", snap, err)
		}
	}
	info, err := s.remote.putOnce(ctx, key, cond, blob)
	if errors.Is(err, objstore.ErrPrecondition) && cond.IfAbsent {
		return fmt.Errorf("snapshot %s: manifest %s: %w in the bucket", snap, key, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("snapshot %s: upload manifest %s: %w", snap, key, err)
	}
	path := filepath.Join(s.SnapshotPath(snap), store.ManifestName)
	if err := fsutil.WriteFileAtomic(path, blob); err != nil {
		return err
	}
	if tags == nil {
		tags = map[string]string{}
	}
	tags[store.ManifestName] = info.ETag
	s.stampMirror(ctx, snap, tags)
	return nil
}

// putOnce is a conditional Put that tells its own write from another's:
// a retried attempt whose first one reached the server but not its
// answer fails its condition on its own object, which is then found
// holding data.
func (r *remote) putOnce(ctx context.Context, key string, cond objstore.Cond, data []byte) (objstore.ObjectInfo, error) {
	info, err := r.bucket.Put(ctx, key, cond, data)
	if !errors.Is(err, objstore.ErrPrecondition) {
		return info, err
	}
	got, ginfo, gerr := r.bucket.Get(ctx, key, int64(len(data)), nil)
	if gerr == nil && bytes.Equal(got, data) {
		return ginfo, nil
	}
	return info, err
}

// manifestUpdateTries bounds the retries of an update that another host's
// update of the same manifest got ahead of.
const manifestUpdateTries = 8

// updateManifestRemote is UpdateManifest on a remote store: the manifest
// the bucket has is read, changed and put back only if it is still that
// version (If-Match), so that two hosts' updates do not lose one another
// and a manifest a forget deleted is not brought back (ErrNotFound).
func (s *rstore) updateManifestRemote(ctx context.Context, snap store.Snapshot, fn func(*store.Manifest) error) error {
	key := store.SnapshotFile(snap, store.ManifestName)
	for range manifestUpdateTries {
		blob, info, err := s.remote.bucket.Get(ctx, key, store.MaxManifestBlob, nil)
		if errors.Is(err, objstore.ErrNotExist) {
			return fmt.Errorf("snapshot %s: %w: no manifest in the bucket", snap, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("snapshot %s: read manifest %s: %w", snap, key, err)
		}
		m, err := store.ParseManifest("bucket "+s.remote.cfg.Bucket+": "+key, blob, snap)
		if err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
		nb, err := store.EncodeManifest(snap, m)
		if err != nil {
			return err
		}
		err = s.putManifest(ctx, snap, nb, objstore.Cond{IfMatch: info.ETag}, nil)
		if !errors.Is(err, objstore.ErrPrecondition) {
			return err
		}
	}
	return fmt.Errorf("snapshot %s: manifest %s changed by others %d times while it was updated: %w",
		snap, key, manifestUpdateTries, store.ErrLocked)
}

// setProtectedRemote puts or deletes the snapshot's protection marker in
// the bucket, before the local one changes. A marker put on a snapshot
// whose manifest a forget deleted meanwhile is taken back (the forget
// checked for it first: rule 3's order, for protection).
func (s *rstore) setProtectedRemote(ctx context.Context, snap store.Snapshot, on bool) error {
	key := store.SnapshotFile(snap, store.ProtectedName)
	if !on {
		if err := s.remote.bucket.Delete(ctx, key); err != nil {
			return fmt.Errorf("unprotect %s: %s: %w", snap, key, err)
		}
		return nil
	}
	if _, err := s.remote.bucket.Put(ctx, key, objstore.Cond{}); err != nil {
		return fmt.Errorf("protect %s: %s: %w", snap, key, err)
	}
	there, err := s.remote.manifestThere(ctx, snap)
	if err != nil {
		return fmt.Errorf("protect %s: %w", snap, err)
	}
	if !there {
		s.remote.bucket.Delete(ctx, key)
		return fmt.Errorf("protect %s: %w: its manifest is gone from the bucket (forgotten)", snap, store.ErrNotFound)
	}
	return nil
}

// stampMirror gives the snapshot's local files this host put the
// LastModified their objects are listed with (one listing), by which the
// next refresh knows them unchanged. tags holds the ETags of what was put
// (by name): an object another host replaced since is left to the next
// refresh. Failing changes nothing but a download more.
func (s *rstore) stampMirror(ctx context.Context, snap store.Snapshot, tags map[string]string) {
	dir := s.SnapshotPath(snap)
	for obj, err := range s.remote.bucket.List(ctx, store.SnapshotFile(snap, ""), "") {
		if err != nil {
			return
		}
		name := path.Base(obj.Key)
		if tag, ok := tags[name]; !ok || tag == "" || tag != obj.ETag || obj.LastModified.IsZero() {
			continue
		}
		ts := []unix.Timespec{unix.NsecToTimespec(time.Now().UnixNano()), unix.NsecToTimespec(obj.LastModified.UnixNano())}
		unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(dir, name), ts, unix.AT_SYMLINK_NOFOLLOW)
	}
}

// commitManifestRemote is CommitManifest on a remote store: the files
// the manifest lists are uploaded first and then the manifest
// (If-None-Match), so that the bucket has the snapshot before the
// directory shows it finished (a refresh would otherwise take it for one
// forgotten).
func (s *rstore) commitManifestRemote(ctx context.Context, snap store.Snapshot, tmp string) error {
	dir := s.SnapshotPath(snap)
	final := filepath.Join(dir, store.ManifestName)
	blob, err := store.ReadFileBounded(filepath.Join(dir, tmp), store.MaxManifestBlob)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", snap, err)
	}
	m, err := store.ParseManifest(filepath.Join(dir, tmp), blob, snap)
	if err != nil {
		return err
	}
	tags, err := s.uploadFiles(ctx, snap, m.Files)
	if err != nil {
		s.dropUploads(snap, m.Files)
		return fmt.Errorf("snapshot %s: %w (unfinished: no manifest written)", snap, err)
	}
	key := store.SnapshotFile(snap, store.ManifestName)
	if err := s.remote.notePublishing(ctx, snap); err != nil {
		return fmt.Errorf("snapshot %s: %w", snap, err)
	}
	info, err := s.remote.putOnce(ctx, key, objstore.Cond{IfAbsent: true}, blob)
	if err != nil {
		return fmt.Errorf("snapshot %s: upload manifest %s: %w", snap, key, err)
	}
	if err := os.Rename(filepath.Join(dir, tmp), final); err != nil {
		return fmt.Errorf("snapshot %s: %w", snap, err)
	}
	tags[store.ManifestName] = info.ETag
	s.stampMirror(ctx, snap, tags)
	return nil
}
