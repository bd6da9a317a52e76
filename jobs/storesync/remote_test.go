package storesync

import (
	"errors"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestSyncRemote copies local -> MinIO -> local through the same code:
// a second directory attached to the bucket sees every copied snapshot
// (so the bucket has them whole, manifests included), a second sync
// copies no chunk, and the copy back reads the same.
func TestSyncRemote(t *testing.T) {
	a := storetest.NewStore(t)
	r, cfg := storetest.NewRemoteStoreOn(t, miniotest.Start(t), s3store.Config{})
	snaps := append(backups(t, a, vm1, 3), backups(t, a, ct2, 1)...)

	rep := mustRun(t, a, r, Options{})
	if rep.SnapshotsCopied != 4 || rep.ChunksCopied != 16+2+16 {
		t.Fatalf("local -> remote: %+v", rep)
	}
	other := storetest.AttachRemoteStore(t, cfg)
	if _, err := New(r, other, Options{}, nil); !errors.Is(err, ErrSameStore) {
		t.Fatalf("two directories of one bucket: %v", err)
	}
	for _, s := range snaps {
		sameSnapshot(t, a, r, s)
		sameSnapshot(t, a, other, s)
	}
	if again := mustRun(t, a, r, Options{}); again.SnapshotsCopied != 0 || again.ChunksCopied != 0 {
		t.Fatalf("second sync: %+v", again)
	}

	next := storetest.BackupImage(t, a, vm1, t0.Add(3*60*60e9), storetest.Image{Data: imageAt(vm1.String(), 3), ChunkSize: chunkSize})
	if rep := mustRun(t, a, r, Options{Group: &vm1}); rep.SnapshotsCopied != 1 || rep.ChunksCopied != 1 {
		t.Fatalf("one more: %+v", rep)
	}
	snaps = append(snaps, next)

	// a group of its own with data the bucket has: found by the insert's
	// lookup, nothing uploaded
	twin := store.Group{Type: store.TypeVM, ID: "101"}
	storetest.BackupImage(t, a, twin, t0, storetest.Image{Data: imageAt(vm1.String(), 0), ChunkSize: chunkSize})
	if rep := mustRun(t, a, r, Options{Group: &twin}); rep.SnapshotsCopied != 1 || rep.ChunksCopied != 0 || rep.ChunksReused != 16 {
		t.Fatalf("twin: %+v", rep)
	}

	c := storetest.NewStore(t)
	if rep := mustRun(t, other, c, Options{}); rep.SnapshotsCopied != 6 {
		t.Fatalf("remote -> local: %+v", rep)
	}
	for _, s := range snaps {
		sameSnapshot(t, a, c, s)
	}
}

// TestSyncRemoteCancelled: a copy into a bucket cancelled before its
// manifest leaves nothing complete-looking there.
func TestSyncRemoteCancelled(t *testing.T) {
	a := storetest.NewStore(t)
	r, cfg := storetest.NewRemoteStoreOn(t, miniotest.Start(t), s3store.Config{})
	snaps := backups(t, a, vm1, 2)
	cancelBeforeManifest(t, a, r, snaps[1])
	other := storetest.AttachRemoteStore(t, cfg)
	for _, s := range []*store.Store{r, other} {
		if got := finished(t, s, vm1); len(got) != 1 || got[0] != snaps[0] {
			t.Fatalf("%s has %v", s.Root(), got)
		}
	}
}
