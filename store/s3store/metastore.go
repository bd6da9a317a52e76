package s3store

import (
	"context"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
)

// remoteMeta is the MetaStore of a remote store: the bucket is the
// truth, the local directory its mirror (rules 1, 3 and 5 of docs/design/store.md;
// meta*.go, forget.go, leases.go).
type remoteMeta struct{ s *rstore }

var _ store.MetaStore = remoteMeta{}

// Publish implements MetaStore: the files, then the manifest
// (If-None-Match), then the local manifest (publish).
func (r remoteMeta) Publish(ctx context.Context, b *store.Backup, m *store.Manifest) error {
	return r.s.publish(ctx, b, m)
}

// WriteManifest implements MetaStore: the bucket first.
func (r remoteMeta) WriteManifest(ctx context.Context, snap store.Snapshot, blob []byte) error {
	return r.s.putManifest(ctx, snap, blob, objstore.Cond{}, nil)
}

// UpdateManifest implements MetaStore: the bucket's manifest, If-Match.
func (r remoteMeta) UpdateManifest(ctx context.Context, snap store.Snapshot, fn func(*store.Manifest) error) error {
	return r.s.updateManifestRemote(ctx, snap, fn)
}

// CommitManifest implements MetaStore: the files, the manifest, then the
// rename.
func (r remoteMeta) CommitManifest(ctx context.Context, snap store.Snapshot, tmp string) error {
	return r.s.commitManifestRemote(ctx, snap, tmp)
}

// Forget implements MetaStore (rule 3).
func (r remoteMeta) Forget(ctx context.Context, snap store.Snapshot) error {
	return r.s.forgetRemote(ctx, snap)
}

// CanForget implements MetaStore: the marker and the writers building on
// snap.
func (r remoteMeta) CanForget(ctx context.Context, snap store.Snapshot) error {
	return r.s.canForgetRemote(ctx, snap)
}

// ForgetGroup implements MetaStore: the unfinished snapshots' files.
func (r remoteMeta) ForgetGroup(ctx context.Context, g store.Group) error {
	return r.s.forgetGroupRemote(ctx, g)
}

// Protect implements MetaStore: the bucket's marker.
func (r remoteMeta) Protect(ctx context.Context, snap store.Snapshot, on bool) error {
	return r.s.setProtectedRemote(ctx, snap, on)
}

// NameBase implements MetaStore: in the writer's lease (rule 3).
func (r remoteMeta) NameBase(ctx context.Context, b *store.Backup, held []store.Snapshot, base store.Snapshot) (bool, error) {
	return r.s.nameBase(ctx, b, held, base)
}

// LockGroup implements MetaStore: the group's lease (rule 1).
func (r remoteMeta) LockGroup(ctx context.Context, g store.Group) (*objstore.Lease, error) {
	return r.s.lockGroupLease(ctx, g)
}

// RegisterWriter implements MetaStore: a writer lease, in the registry.
func (r remoteMeta) RegisterWriter(ctx context.Context) (*objstore.Lease, error) {
	return r.s.remote.acquireWriter(ctx)
}

// ReleaseWriter implements MetaStore.
func (r remoteMeta) ReleaseWriter(ctx context.Context, l *objstore.Lease) error {
	return r.s.remote.releaseWriter(ctx, l)
}

// Refresh implements MetaStore: the whole mirror.
func (r remoteMeta) Refresh(ctx context.Context) error { return r.s.refreshAll(ctx) }

// RefreshGroup implements MetaStore.
func (r remoteMeta) RefreshGroup(ctx context.Context, g store.Group) error {
	return r.s.refreshGroup(ctx, g)
}

// Close implements MetaStore: the store's own requests are cancelled.
func (r remoteMeta) Close(context.Context) error {
	r.s.remote.close()
	return nil
}
