package store_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

var refGroup = store.Group{Type: store.TypeHost, ID: "refs"}

func refTime(i int) time.Time { return time.Date(2026, 3, 1, 0, i, 0, 0, time.UTC) }

// snapWith writes a finished snapshot of refGroup at refTime(i) holding
// the images (64 KiB chunks) and blobs named.
func snapWith(t *testing.T, s *store.Store, i int, names ...string) store.Snapshot {
	t.Helper()
	ctx := context.Background()
	b, err := s.StartBackup(ctx, refGroup, refTime(i))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	for _, n := range names {
		if n[len(n)-4:] == "blob" {
			err = b.AddBlobData(n, []byte(n))
		} else {
			err = b.AddImage(ctx, n, bytes.NewReader(storetest.RandBytes(n, 3*(64<<10))), store.ImageOptions{ChunkSize: 64 << 10, Workers: 1})
		}
		if err != nil {
			b.Abort()
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return b.Snapshot()
}

func wantRef(t *testing.T, b *store.Backup, name string, want *store.Snapshot) {
	t.Helper()
	got, ok, err := b.Reference(context.Background(), name)
	switch {
	case err != nil:
		t.Fatalf("reference of %s: %v", name, err)
	case want == nil && ok:
		t.Fatalf("reference of %s is %s, want none", name, got)
	case want != nil && (!ok || got != *want):
		t.Fatalf("reference of %s is %v %v, want %s", name, got, ok, *want)
	}
}

// Each archive's reference is the newest finished snapshot that has it
// and whose verification did not fail; the backup holds every one.
func TestReferencePerArchive(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	a := snapWith(t, s, 1, "disk.img", "conf.blob")
	bad := snapWith(t, s, 2, "disk.img")
	if err := s.UpdateManifest(ctx, bad, func(m *store.Manifest) error {
		m.SetVerifyState(store.VerifyState{State: "failed"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	o := snapWith(t, s, 3, "other.img")
	snapWith(t, s, 4, "conf.blob")
	b, err := s.StartBackup(ctx, refGroup, refTime(5))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	wantRef(t, b, "disk.img", &a)
	wantRef(t, b, "other.img", &o)
	wantRef(t, b, "new.img", nil)
	wantRef(t, b, "disk.img", &a) // picked once
	if got := b.Bases(); !slices.Equal(got, []store.Snapshot{a, o}) {
		t.Fatalf("bases %v, want %s and %s", got, a, o)
	}
	for _, snap := range []store.Snapshot{a, o} {
		if err := s.ForgetSnapshot(ctx, snap); !errors.Is(err, store.ErrLocked) {
			t.Fatalf("forget of reference %s during the backup: %v", snap, err)
		}
	}
	if err := s.ForgetSnapshot(ctx, bad); err != nil {
		t.Fatalf("forget of a snapshot no archive builds on: %v", err)
	}
}

// Remote store (rule 3): the writer's lease names the reference of every
// archive, so another host's forget of any of them is refused while the
// backup runs, and goes through once it ends.
func TestRemoteLeaseNamesEveryReference(t *testing.T) {
	ctx := context.Background()
	h1, bucket := storetest.NewMemStore(t)
	h2 := storetest.AttachMemStore(t, bucket)
	a := snapWith(t, h1, 1, "disk.img")
	o := snapWith(t, h1, 2, "other.img")
	b, err := h1.StartBackup(ctx, refGroup, refTime(3))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	for _, n := range []string{"disk.img", "other.img"} {
		if err := b.AddImage(ctx, n, bytes.NewReader(storetest.RandBytes(n, 3*(64<<10))), store.ImageOptions{Workers: 1}); err != nil {
			b.Abort()
			t.Fatal(err)
		}
	}
	if got := b.References(); got["disk.img"] != a || got["other.img"] != o {
		t.Fatalf("references %v, want disk.img %s, other.img %s", got, a, o)
	}
	if err := h2.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, snap := range []store.Snapshot{a, o} {
		if err := h2.ForgetSnapshot(ctx, snap); !errors.Is(err, store.ErrSnapshotInUse) {
			b.Abort()
			t.Fatalf("another host's forget of reference %s during the backup: %v", snap, err)
		}
		if !bucket.Has(snap.String() + "/" + store.ManifestName) {
			b.Abort()
			t.Fatalf("the refused forget of %s did not put its manifest back", snap)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	for _, snap := range []store.Snapshot{a, o} {
		if err := h2.ForgetSnapshot(ctx, snap); err != nil {
			t.Fatalf("forget of %s once the backup ended: %v", snap, err)
		}
	}
}
