package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairnfs/cairn/store/internal/fsutil"
	"github.com/cairnfs/cairn/store/objstore"
)

// MetaStore is the seam for snapshot metadata, as Backend is for chunks:
// what a change to a snapshot, a group or a writer does beyond the
// store's directory. The store writes its snapshot directories, takes
// its flocks and registers its writers there itself, then calls its
// MetaStore, chosen once when the store is opened (Store.meta): the
// local one (localMeta, this file) mostly does nothing more; a remote
// store's (store/s3store) keeps the bucket, the truth for every host,
// in step (the rules in docs/design/store.md). A new Store method that
// changes snapshot metadata adds its method here, and the compiler asks
// both sides for it.
type MetaStore interface {
	// Publish finishes b's snapshot with manifest m: its files made
	// durable, m written last (Backup.Finish).
	Publish(ctx context.Context, b *Backup, m *Manifest) error
	// WriteManifest writes snap's manifest blob (Store.WriteManifest).
	WriteManifest(ctx context.Context, snap Snapshot, blob []byte) error
	// UpdateManifest changes snap's manifest by fn and writes it back,
	// the manifest lock held (Store.UpdateManifest).
	UpdateManifest(ctx context.Context, snap Snapshot, fn func(*Manifest) error) error
	// CommitManifest finishes a snapshot written outside a Backup: its
	// manifest, checked, is the hidden file tmp of its directory, which is
	// renamed into place last (Store.CommitManifest).
	CommitManifest(ctx context.Context, snap Snapshot, tmp string) error
	// Forget removes what is kept of snap beyond its directory, which is
	// removed next (snap locked exclusively; Store.ForgetSnapshot).
	Forget(ctx context.Context, snap Snapshot) error
	// CanForget tells, changing nothing, what Forget would refuse.
	CanForget(ctx context.Context, snap Snapshot) error
	// ForgetGroup removes what is kept of g beyond its directory once its
	// snapshots are forgotten, g's lock held.
	ForgetGroup(ctx context.Context, g Group) error
	// Protect sets or clears snap's protection before the local marker
	// changes (snap locked shared).
	Protect(ctx context.Context, snap Snapshot, on bool) error
	// NameBase makes base, a snapshot b's archives build on (its
	// snapshot lock held), safe from forgets elsewhere while b runs;
	// false: base is gone (forgotten), and b must not build on it.
	// held are the bases b holds already (Backup.Bases, read under
	// the lock its caller holds).
	NameBase(ctx context.Context, b *Backup, held []Snapshot, base Snapshot) (bool, error)
	// LockGroup takes what keeps other hosts' backups of g out beside the
	// local flock: a lease, or nil when the flock does it all.
	LockGroup(ctx context.Context, g Group) (*objstore.Lease, error)
	// RegisterWriter makes a writer registered in the store's directory
	// known beyond it: a lease, or nil.
	RegisterWriter(ctx context.Context) (*objstore.Lease, error)
	// ReleaseWriter ends what RegisterWriter took (not nil).
	ReleaseWriter(ctx context.Context, l *objstore.Lease) error
	// Refresh brings the snapshot directories up to date (Store.Refresh).
	Refresh(ctx context.Context) error
	// RefreshGroup is Refresh for one group, its lock held; what cannot
	// be mirrored is logged, not returned.
	RefreshGroup(ctx context.Context, g Group) error
	// Close releases what the MetaStore holds.
	Close(ctx context.Context) error
}

// Refresh brings a remote store's local snapshot directories up to date
// with the bucket (docs/design/store.md, store/s3store); on a local store
// it does nothing. A *s3store.RefreshError lists what it refused to mirror; another
// error means the bucket could not be listed whole (then only the
// snapshots of groups listed whole before may have been removed).
func (s *Store) Refresh(ctx context.Context) error { return s.meta.Refresh(ctx) }

// localMeta is the MetaStore of a local store: the directory is all
// there is.
type localMeta struct{ s *Store }

var _ MetaStore = localMeta{}

// Publish implements MetaStore: the manifest is written, atomically.
func (l localMeta) Publish(ctx context.Context, b *Backup, m *Manifest) error {
	blob, err := EncodeManifest(b.snap, m)
	if err != nil {
		return err
	}
	return l.WriteManifest(ctx, b.snap, blob)
}

// WriteManifest implements MetaStore (temp + rename).
func (l localMeta) WriteManifest(_ context.Context, snap Snapshot, blob []byte) error {
	return fsutil.WriteFileAtomic(filepath.Join(l.s.SnapshotPath(snap), ManifestName), blob)
}

// UpdateManifest implements MetaStore: load, modify, replace.
func (l localMeta) UpdateManifest(ctx context.Context, snap Snapshot, fn func(*Manifest) error) error {
	m, err := l.s.ReadManifest(snap)
	if err != nil {
		return err
	}
	if err := fn(m); err != nil {
		return err
	}
	blob, err := EncodeManifest(snap, m)
	if err != nil {
		return err
	}
	return l.WriteManifest(ctx, snap, blob)
}

// CommitManifest implements MetaStore: the rename.
func (l localMeta) CommitManifest(_ context.Context, snap Snapshot, tmp string) error {
	dir := l.s.SnapshotPath(snap)
	if err := os.Rename(filepath.Join(dir, tmp), filepath.Join(dir, ManifestName)); err != nil {
		return fmt.Errorf("snapshot %s: %w", snap, err)
	}
	return nil
}

// Forget implements MetaStore: nothing beyond the directory.
func (localMeta) Forget(context.Context, Snapshot) error { return nil }

// CanForget implements MetaStore.
func (localMeta) CanForget(context.Context, Snapshot) error { return nil }

// ForgetGroup implements MetaStore.
func (localMeta) ForgetGroup(context.Context, Group) error { return nil }

// Protect implements MetaStore: the local marker is all.
func (localMeta) Protect(context.Context, Snapshot, bool) error { return nil }

// NameBase implements MetaStore: the snapshot lock is all.
func (localMeta) NameBase(context.Context, *Backup, []Snapshot, Snapshot) (bool, error) {
	return true, nil
}

// LockGroup implements MetaStore: the flock is all.
func (localMeta) LockGroup(context.Context, Group) (*objstore.Lease, error) { return nil, nil }

// RegisterWriter implements MetaStore: the writer file is all.
func (localMeta) RegisterWriter(context.Context) (*objstore.Lease, error) { return nil, nil }

// ReleaseWriter implements MetaStore.
func (localMeta) ReleaseWriter(context.Context, *objstore.Lease) error { return nil }

// Refresh implements MetaStore: the directory is up to date.
func (localMeta) Refresh(context.Context) error { return nil }

// RefreshGroup implements MetaStore.
func (localMeta) RefreshGroup(context.Context, Group) error { return nil }

// Close implements MetaStore.
func (localMeta) Close(context.Context) error { return nil }
