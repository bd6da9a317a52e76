package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/storetest"
)

var gcGroup = store.Group{Type: store.TypeVM, ID: "gc"}

// remoteGCStore is a host on bk with one forgotten snapshot, its chunks
// (garbage now) and their blobs. The chunks' LastModified is more than a
// second before it returns (HTTP dates have one second's resolution).
func remoteGCStore(t *testing.T, bk *storetest.Bucket) (*store.Store, []chunk.Digest, map[chunk.Digest][]byte) {
	t.Helper()
	ctx := context.Background()
	s := bk.Attach(t)
	snap := storetest.BackupImage(t, s, gcGroup, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		storetest.Image{Data: storetest.RandBytes("gc-wait", 6*(64<<10)), ChunkSize: 64 << 10})
	ds := storetest.ChunksOf(t, s, snap)
	blobs := map[chunk.Digest][]byte{}
	for _, d := range ds {
		b, err := s.ReadChunk(ctx, d, store.ChunkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		blobs[d] = append([]byte(nil), b.Bytes()...)
		b.Release()
	}
	if err := s.ForgetSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	bk.Pass(1100 * time.Millisecond)
	return s, ds, blobs
}

// Rule 2 of the bucket's protocol, against a sweep (rule 4): a writer
// that finds an old chunk and touches it after the sweep listed it
// (here: just before the sweep's delete request, which waits for the
// touch) sees the GC sweeping, waits until the GC has ended its sweep,
// finds its chunk gone and uploads it again.
func TestRemoteGCSweepWaitsWriter(t *testing.T) { storetest.EachBucket(t, testGCSweepWaitsWriter) }

func testGCSweepWaitsWriter(t *testing.T, bk *storetest.Bucket) {
	ctx := context.Background()
	s, ds, blobs := remoteGCStore(t, bk)
	defer store.SetSweepPoll(10 * time.Millisecond)()
	c, st := storetest.BeginUnmarked(t, s)
	defer c.Close()
	s2 := bk.Attach(t) // the writer's host
	w, err := s2.RegisterWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Done()
	revived := ds[2]
	type result struct {
		existed bool
		err     error
	}
	done := make(chan result, 1)
	store.SetGCBeforeDelete(func([]string) {
		go func() {
			existed, err := s2.InsertChunk(revived, blobs[revived])
			done <- result{existed, err}
		}()
		// the touch lands (LastModified moves past the GC's start) before
		// the delete is sent
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if oi, err := bk.Head(ctx, store.ChunkKey(revived)); err == nil && !oi.LastModified.Before(st.Phase1) {
				return
			}
		}
		t.Error("the writer never touched the chunk")
	})
	defer store.SetGCBeforeDelete(nil)
	all := bk.Count(t, ".chunks/") // the image's chunks and the zero chunk
	n, err := c.Sweep(ctx, store.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.RemovedChunks != int64(all) || all < len(ds) || n.Files != int64(all) {
		t.Errorf("removed %d of %d chunks listed, want all %d in the bucket", n.RemovedChunks, n.Files, all)
	}
	select {
	case r := <-done:
		t.Fatalf("the writer went on while the GC swept (existed %v, err %v)", r.existed, r.err)
	default:
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	bk.Pass(3 * time.Second) // the writer stores the chunk again once the record's end is surely past
	select {
	case r := <-done:
		if r.err != nil || r.existed {
			t.Fatalf("after the sweep: existed %v, err %v; want the chunk uploaded again", r.existed, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the writer still waits after the GC lease was released")
	}
	for _, d := range ds {
		if gone := !bk.Has(t, store.ChunkKey(d)); gone == (d == revived) {
			t.Errorf("chunk %s: gone %v; want only the revived chunk %s back", d, gone, revived)
		}
	}
}

// One GC per bucket: a second one, from another store directory, is
// refused while the first holds the lease, and runs once it is released.
func TestRemoteGCOnePerBucket(t *testing.T) { storetest.EachBucket(t, testGCOnePerBucket) }

func testGCOnePerBucket(t *testing.T, bk *storetest.Bucket) {
	ctx := context.Background()
	s, _, _ := remoteGCStore(t, bk)
	c1 := s.ChunkCollector()
	if _, err := c1.Begin(ctx, 0); err != nil {
		t.Fatal(err)
	}
	c2 := bk.Attach(t).ChunkCollector()
	_, err := c2.Begin(ctx, 0)
	if !errors.Is(err, store.ErrLocked) || !errors.Is(err, objstore.ErrHeld) {
		t.Fatalf("second GC: %v, want ErrLocked and ErrHeld", err)
	}
	c2.Close()
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	c2 = bk.Attach(t).ChunkCollector()
	defer c2.Close()
	if _, err := c2.Begin(ctx, 0); err != nil {
		t.Fatalf("after the first GC ended: %v", err)
	}
}

// A running writer bounds the cutoff: its start less GCWriterMargin,
// in the server's clock.
func TestRemoteGCWriterBoundsCutoff(t *testing.T) { storetest.EachBucket(t, testGCWriterBoundsCutoff) }

func testGCWriterBoundsCutoff(t *testing.T, bk *storetest.Bucket) {
	ctx := context.Background()
	s, _, _ := remoteGCStore(t, bk)
	w, err := s.RegisterWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Done()
	c := s.ChunkCollector()
	defer c.Close()
	st, err := c.Begin(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !st.OldestWriter.Equal(w.Start()) || !st.Cutoff.Equal(w.Start().Add(-store.GCWriterMargin)) {
		t.Errorf("writer %v: oldest writer %v, cutoff %v", w.Start(), st.OldestWriter, st.Cutoff)
	}
}
