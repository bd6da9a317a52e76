package store_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore/memstore"
	"github.com/cairnfs/cairn/store/storetest"
)

// Rule 3: a forget refuses while a live writer (here another host's
// backup) names the snapshot as its base, and puts the manifest back;
// once that writer ends, the forget goes through.
func TestRemoteForgetRefusedWhileWriterBuildsOnIt(t *testing.T) {
	storetest.EachBucket(t, testForgetRefusedWhileWriterBuildsOnIt)
}

func testForgetRefusedWhileWriterBuildsOnIt(t *testing.T, bk *storetest.Bucket) {
	h1, h2 := bk.Attach(t), bk.Attach(t)
	ctx := context.Background()
	a := backupAt(t, h1, vm1, 1)
	refresh(t, h2)
	w, err := h2.StartBackup(ctx, vm1, at(2))
	if err != nil {
		t.Fatal(err)
	}
	if base, ok, err := w.Reference(ctx, "disk.img"); err != nil || !ok || !base.Time.Equal(a.Time) {
		t.Fatalf("the writer's base is %v %v %v, want %s", base, ok, err, a)
	}
	if err := h1.CanForget(ctx, a); !errors.Is(err, store.ErrSnapshotInUse) {
		t.Fatalf("CanForget while a writer builds on it: %v", err)
	}
	err = h1.ForgetSnapshot(ctx, a)
	if !errors.Is(err, store.ErrSnapshotInUse) {
		t.Fatalf("forget while a writer builds on it: %v", err)
	}
	host, _ := os.Hostname()
	if !strings.Contains(err.Error(), host) {
		t.Errorf("the refusal does not name the writer's host: %v", err)
	}
	if !inBucket(t, h1, snapKey(a, store.ManifestName)) || !finished(t, h1, a) {
		t.Fatal("the refused forget did not put the manifest back")
	}
	w.Sync = store.SyncNone
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := h1.ForgetSnapshot(ctx, a); err != nil {
		t.Fatalf("forget once the writer ended: %v", err)
	}
	if inBucket(t, h1, snapKey(a, "disk.img.fidx")) {
		t.Fatal("the forget left the snapshot's index in the bucket")
	}
}

// Rule 3, the writer's side: a base whose manifest has left the bucket
// (a forget that has deleted it and not yet listed the writers) is
// dropped by a backup that starts then.
func TestRemoteWriterDropsVanishedBase(t *testing.T) {
	storetest.EachBucket(t, testWriterDropsVanishedBase)
}

func testWriterDropsVanishedBase(t *testing.T, bk *storetest.Bucket) {
	h1, h2 := bk.Attach(t), bk.Attach(t)
	ctx := context.Background()
	a := backupAt(t, h1, vm1, 1)
	refresh(t, h2)
	// the forget's deletion comes after the backup's refresh of the group
	// (which took a as its base) and before it names a in its lease
	deleted := false
	store.SetNameBaseHook(func(b *store.Backup, base store.Snapshot) {
		if base.Time.Equal(a.Time) {
			deleted = true
			if err := store.BucketOf(h1).Delete(ctx, snapKey(a, store.ManifestName)); err != nil {
				t.Error(err)
			}
		}
	})
	defer store.SetNameBaseHook(nil)
	w, err := h2.StartBackup(ctx, vm1, at(2))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	base, ok, err := w.Reference(ctx, "disk.img")
	if err != nil {
		t.Fatal(err)
	}
	if !deleted {
		t.Fatal("the backup did not take the base it had when it named it")
	}
	if ok {
		t.Fatalf("the writer builds on %s, whose manifest is gone from the bucket", base)
	}
}

// Rule 1: a group's backup lease keeps a second host's backup of the
// group out; the refusal names the holder; once released, it is free,
// and a second host waiting for it gets it (on the in-memory bucket it
// is released once the waiting host has found it held).
func TestRemoteGroupLeaseExclusive(t *testing.T) {
	storetest.EachBucket(t, testGroupLeaseExclusive)
}

func testGroupLeaseExclusive(t *testing.T, bk *storetest.Bucket) {
	h1, h2 := bk.Attach(t), bk.Attach(t)
	ctx := context.Background()
	l, err := h1.LockGroup(ctx, vm1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h2.StartBackup(ctx, vm1, at(1))
	var le *store.LockedError
	if !errors.As(err, &le) || len(le.Holders) != 1 {
		t.Fatalf("a second host's backup of a leased group: %v", err)
	}
	host, _ := os.Hostname()
	if h := le.Holders[0]; h.Host != host || h.PID == 0 || h.Started.IsZero() {
		t.Errorf("holder %+v, want host %s, a PID and a start", h, host)
	}
	// another group is free
	other := store.Group{Type: store.TypeVM, ID: "2"}
	b, err := h2.StartBackup(ctx, other, at(1))
	if err != nil {
		t.Fatal(err)
	}
	b.Abort()
	// waiting: released meanwhile
	h2.SetLockWait(time.Minute)
	store.SetLeaseTTL(h2, time.Second) // its polls: every 100 ms
	releaseWhenWaiting(t, bk, ".cairn/leases/groups/"+vm1.String(), func() { l.Unlock() })
	l2, err := h2.LockGroup(ctx, vm1)
	if err != nil {
		t.Fatalf("the lease once released: %v", err)
	}
	l2.Unlock()
}

// releaseWhenWaiting runs release once another host waits for the lease
// at key: on the in-memory bucket when it has read the lease held; on
// MinIO after 300 ms.
func releaseWhenWaiting(t *testing.T, bk *storetest.Bucket, key string, release func()) {
	if bk.Mem == nil {
		time.AfterFunc(300*time.Millisecond, release)
		return
	}
	var once sync.Once
	bk.Mem.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpGet && c.Key == key {
			once.Do(func() { go release() })
		}
		return nil
	})
	t.Cleanup(func() { bk.Mem.SetHook(nil) })
}

// Rule 1: a backup whose writer lease is lost (here deleted behind its
// back, so that its next renewal fails) fails in Finish and publishes no
// manifest.
func TestRemoteLeaseLostFailsBackup(t *testing.T) {
	storetest.EachBucket(t, testLeaseLostFailsBackup)
}

func testLeaseLostFailsBackup(t *testing.T, bk *storetest.Bucket) {
	s := bk.Attach(t)
	const ttl = 2 * time.Second
	store.SetLeaseTTL(s, ttl)
	ctx := context.Background()
	b, err := s.StartBackup(ctx, vm1, at(1))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	if err := b.AddBlob("a.blob", mustBlob(t, "a")); err != nil {
		t.Fatal(err)
	}
	if err := bk.Delete(ctx, store.WriterLeaseKey(b)); err != nil {
		t.Fatal(err)
	}
	bk.Pass(ttl / 5) // a renewal
	select {
	case <-store.WriterLeaseLost(b):
	case <-time.After(30 * time.Second):
		t.Fatal("the lease was not lost after its object was deleted")
	}
	err = b.Finish()
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("Finish after the lease was lost: %v", err)
	}
	snap := b.Snapshot()
	if inBucket(t, s, snapKey(snap, store.ManifestName)) || finished(t, s, snap) {
		t.Fatal("a backup that lost its lease published its manifest")
	}
}

// A manifest update on a host whose mirror still has a snapshot another
// host forgot fails with ErrNotFound and does not bring the manifest
// back into the bucket (its If-Match finds nothing); so does a
// protection.
func TestRemoteUpdateAfterForgetElsewhere(t *testing.T) {
	storetest.EachBucket(t, testUpdateAfterForgetElsewhere)
}

func testUpdateAfterForgetElsewhere(t *testing.T, bk *storetest.Bucket) {
	h1, h2 := bk.Attach(t), bk.Attach(t)
	ctx := context.Background()
	a := backupAt(t, h1, vm1, 1)
	refresh(t, h2)
	if err := h1.ForgetSnapshot(ctx, a); err != nil {
		t.Fatal(err)
	}
	err := h2.UpdateManifest(ctx, a, func(m *store.Manifest) error {
		m.SetVerifyState(store.VerifyState{State: "ok", UPID: "late"})
		return nil
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a snapshot forgotten elsewhere: %v", err)
	}
	if err := h2.SetProtected(ctx, a, true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("protection of a snapshot forgotten elsewhere: %v", err)
	}
	if inBucket(t, h1, snapKey(a, store.ManifestName)) || inBucket(t, h1, snapKey(a, store.ProtectedName)) {
		t.Fatal("the forgotten snapshot's manifest or marker came back into the bucket")
	}
}
