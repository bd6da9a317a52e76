package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// An object store's word is checked, not trusted (rules 1, 2 and 4 of
// the bucket's protocol, doc.go): each test makes the in-memory bucket
// tell one lie, on one host, and checks that no snapshot is finished
// over a chunk the bucket does not hold.

var liesGroup = store.Group{Type: store.TypeVM, ID: "lies"}

// startImage starts a backup of data on s, its chunks written but the
// snapshot not finished.
func startImage(t *testing.T, s *store.Store, at time.Time, data []byte) *store.Backup {
	t.Helper()
	b, err := s.StartBackup(context.Background(), liesGroup, at)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	if err := b.AddImage(context.Background(), "disk.img", bytes.NewReader(data), store.ImageOptions{ChunkSize: 64 << 10, Workers: 1}); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	return b
}

// missing lists the chunks of snap that the bucket does not hold.
func missing(t *testing.T, s *store.Store, b *memstore.Bucket, snap store.Snapshot) []chunk.Digest {
	t.Helper()
	var out []chunk.Digest
	for _, d := range storetest.ChunksOf(t, s, snap) {
		if !b.Has(s3store.ChunkKey(d)) {
			out = append(out, d)
		}
	}
	return out
}

func isChunk(key string) bool { return strings.HasPrefix(key, ".chunks/") }

// 1. A listing that lags: the GC's host lists no writer lease, while a
// backup on another host has written its chunks. The GC learns the
// writer from the registry (read by key, proven current) and keeps them.
func TestLieListingLags(t *testing.T) {
	a, bucket := storetest.NewMemStore(t)
	bk := startImage(t, a, time.Now().UTC().Truncate(time.Second), storetest.RandBytes("lag", 5*(64<<10)))
	bucket.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpListKey && strings.HasPrefix(c.Key, ".cairn/leases/writers/") {
			c.Lie = memstore.LieOmit
		}
		return nil
	})
	n := storetest.CollectUnmarked(t, storetest.AttachMemStore(t, bucket))
	bucket.SetHook(nil)
	if err := bk.Finish(); err != nil {
		t.Fatalf("finish after the GC: %v", err)
	}
	if m := missing(t, a, bucket, bk.Snapshot()); len(m) > 0 {
		t.Fatalf("the GC removed %d chunks (of %d it deleted) of a running writer it could not list: %v", len(m), n.RemovedChunks, m)
	}
}

// 2. A HEAD that says a missing chunk exists (a stale cache): the backup
// stores every chunk all the same.
func TestLieHeadPhantom(t *testing.T) {
	s, bucket := storetest.NewMemStore(t)
	bucket.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpHead && isChunk(c.Key) {
			c.Lie = memstore.LiePhantom
		}
		return nil
	})
	bk := startImage(t, s, time.Now().UTC().Truncate(time.Second), storetest.RandBytes("phantom", 5*(64<<10)))
	if err := bk.Finish(); err != nil {
		t.Fatal(err)
	}
	bucket.SetHook(nil)
	if m := missing(t, s, bucket, bk.Snapshot()); len(m) > 0 {
		t.Fatalf("backup finished with %d chunks a lying HEAD said were there: %v", len(m), m)
	}
}

// 3. A PUT answered as done that stored nothing: the backup fails and
// publishes no manifest.
func TestLiePutNotStored(t *testing.T) {
	s, bucket := storetest.NewMemStore(t)
	bucket.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpPut && isChunk(c.Key) {
			c.Lie = memstore.LieNotStored
		}
		return nil
	})
	bk, err := s.StartBackup(context.Background(), liesGroup, time.Now().UTC().Truncate(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	err = bk.AddImage(context.Background(), "disk.img", bytes.NewReader(storetest.RandBytes("drop", 3*(64<<10))), store.ImageOptions{ChunkSize: 64 << 10, Workers: 1})
	if err == nil {
		err = bk.Finish()
	} else {
		bk.Abort()
	}
	if !errors.Is(err, objstore.ErrBadAnswer) {
		t.Fatalf("backup over PUTs that stored nothing: %v, want ErrBadAnswer", err)
	}
	for _, k := range bucket.Keys("") {
		if strings.HasSuffix(k, store.ManifestName) {
			t.Fatalf("manifest %s published", k)
		}
	}
}

// 4. A touch answered without being made: a backup reuses the chunks of
// a forgotten snapshot, older than any cutoff, while a GC runs on
// another host; the lie is seen in the answer and the chunks are
// stored again, so the GC keeps them.
func TestLieTouchNoop(t *testing.T) {
	ctx := context.Background()
	a, bucket := storetest.NewMemStore(t)
	data := storetest.RandBytes("touch", 5*(64<<10))
	old := storetest.BackupImage(t, a, liesGroup, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), storetest.Image{Data: data, ChunkSize: 64 << 10})
	if err := a.ForgetSnapshot(ctx, old); err != nil {
		t.Fatal(err)
	}
	bucket.Advance(time.Hour) // the old chunks are older than any cutoff
	bucket.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpTouch && isChunk(c.Key) {
			c.Lie = memstore.LieNoop
		}
		return nil
	})
	bk := startImage(t, a, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), data)
	bucket.SetHook(nil)
	storetest.CollectUnmarked(t, storetest.AttachMemStore(t, bucket))
	if err := bk.Finish(); err != nil {
		t.Fatalf("finish after the GC: %v", err)
	}
	if m := missing(t, a, bucket, bk.Snapshot()); len(m) > 0 {
		t.Fatalf("backup finished over %d chunks whose touch lied and a GC removed: %v", len(m), m)
	}
}

// 1b. A listing of snapshots that lags: a snapshot finished a moment
// ago (its chunks those of its base, not touched: rule 2a) is not in the
// GC host's listing, and its base is forgotten. The GC marks it from
// the registry's recent snapshots, read by key.
func TestLieSnapshotListingLags(t *testing.T) {
	ctx := context.Background()
	a, bucket := storetest.NewMemStore(t)
	data := storetest.RandBytes("recent", 5*(64<<10))
	base := storetest.BackupImage(t, a, liesGroup, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), storetest.Image{Data: data, ChunkSize: 64 << 10})
	snap := storetest.BackupImage(t, a, liesGroup, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), storetest.Image{Data: data, ChunkSize: 64 << 10})
	if err := a.ForgetSnapshot(ctx, base); err != nil {
		t.Fatal(err)
	}
	bucket.Advance(time.Hour) // every chunk is older than the cutoff
	hidden := snap.String() + "/"
	bucket.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpListKey && strings.HasPrefix(c.Key, hidden) {
			c.Lie = memstore.LieOmit
		}
		return nil
	})
	n := storetest.CollectUnmarked(t, storetest.AttachMemStore(t, bucket))
	bucket.SetHook(nil)
	if m := missing(t, a, bucket, snap); len(m) > 0 {
		t.Fatalf("the GC removed %d chunks (of %d) of a finished snapshot its listing did not show: %v", len(m), n.RemovedChunks, m)
	}
}

// A HEAD that says a forgotten base's manifest is still there (rule 3):
// the backup does not build on the base; its chunks, reused from the
// forgotten base, are touched and outlive a GC that runs beside it.
func TestLieHeadForgottenBase(t *testing.T) {
	ctx := context.Background()
	a, bucket := storetest.NewMemStore(t)
	c := storetest.AttachMemStore(t, bucket)
	data := storetest.RandBytes("base", 5*(64<<10))
	base := storetest.BackupImage(t, a, liesGroup, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), storetest.Image{Data: data, ChunkSize: 64 << 10})
	bucket.Advance(time.Hour) // the base's chunks are older than any cutoff
	s3store.SetNameBaseHook(func(*store.Backup, store.Snapshot) {
		if err := c.Refresh(ctx); err != nil {
			t.Error(err)
		}
		if err := c.ForgetSnapshot(ctx, base); err != nil {
			t.Error(err)
		}
		bucket.SetHook(func(_ context.Context, call *memstore.Call) error {
			if call.Op == memstore.OpHead && strings.HasSuffix(call.Key, store.ManifestName) {
				call.Lie = memstore.LiePhantom
			}
			return nil
		})
	})
	defer s3store.SetNameBaseHook(nil)
	bk := startImage(t, a, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), data)
	s3store.SetNameBaseHook(nil)
	bucket.SetHook(nil)
	storetest.CollectUnmarked(t, c)
	if err := bk.Finish(); err != nil {
		t.Fatal(err)
	}
	if m := missing(t, a, bucket, bk.Snapshot()); len(m) > 0 {
		t.Fatalf("backup built on a forgotten base a lying HEAD said was there: %d chunks gone: %v", len(m), m)
	}
}

// Many writers register at once (a cron hour): each conditional write
// of the registry that another got ahead of is retried, none is lost,
// and a GC then counts every one.
func TestRegistryContention(t *testing.T) {
	s, bucket := storetest.NewMemStore(t)
	bucket.SetHook(func(ctx context.Context, c *memstore.Call) error {
		if c.Key == ".cairn/writers.json" {
			time.Sleep(2 * time.Millisecond) // a request's latency: the writes race
		}
		return nil
	})
	const n = 24
	errs := make(chan error, n)
	writers := make(chan *store.Writer, n)
	for range n {
		go func() {
			w, err := s.RegisterWriter()
			errs <- err
			writers <- w
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		defer (<-writers).Done()
	}
	c := s.ChunkCollector()
	defer c.Close()
	st, err := c.Begin(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.OldestWriter.IsZero() {
		t.Fatal("the GC counts no writer")
	}
	if got := storetest.RegisteredWriters(t, bucket); got != n {
		t.Fatalf("%d writers in the registry, want %d", got, n)
	}
}

// A GC that died sweeping left the sweep record saying "sweeping": the
// next GC, which could take the lease only once the dead one's expired
// (its deletes ended), ends the record at its start, so that writers
// stop waiting for the dead one while it marks.
func TestDeadSweepEnded(t *testing.T) {
	ctx := context.Background()
	s, bucket := storetest.NewMemStore(t)
	if _, err := bucket.Put(ctx, ".cairn/gc-sweep.json", objstore.Cond{}, []byte(`{"state":"sweeping"}`)); err != nil {
		t.Fatal(err)
	}
	c := s.ChunkCollector()
	defer c.Close()
	if _, err := c.Begin(ctx, 0); err != nil {
		t.Fatal(err)
	}
	data, _, err := bucket.Get(ctx, ".cairn/gc-sweep.json", 1<<10, nil)
	if err != nil || !strings.Contains(string(data), `"ended"`) {
		t.Fatalf("sweep record after a new GC's start: %q, %v", data, err)
	}
}
