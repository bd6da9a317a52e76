package store_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore/memstore"
	"github.com/cairnfs/cairn/store/storetest"
)

var dryGroup = store.Group{Type: store.TypeVM, ID: "dry"}

const dryChunk = 64 << 10

// dryRunImage backs up base, then dry-runs an image of base, two new
// chunks and the first of them again, and a blob, and checks the counts
// a backup would have had: the repeated new chunk counts once.
func dryRunImage(t *testing.T, s *store.Store, check func()) {
	t.Helper()
	ctx := context.Background()
	base := storetest.RandBytes("dry-base", 5*dryChunk)
	at := time.Now().UTC().Truncate(time.Second).Add(-time.Minute)
	storetest.BackupImage(t, s, dryGroup, at, storetest.Image{Data: base, ChunkSize: dryChunk})
	check() // the state after the real backup is what the dry run must keep
	news := storetest.RandBytes("dry-new", 2*dryChunk)
	data := slices.Concat(base, news, news[:dryChunk])
	b, err := s.StartDryRun(ctx, dryGroup, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	stats := new(store.UploadStats)
	if err := b.AddImage(ctx, "disk.img", bytes.NewReader(data), store.ImageOptions{ChunkSize: dryChunk, Workers: 2, Stats: stats}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddBlobData("notes.blob", []byte("dry")); err != nil {
		t.Fatal(err)
	}
	dir := b.Dir()
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the dry run's directory %s is left: %v", dir, err)
	}
	got := stats.Snapshot()
	if got.Chunks != 8 || got.NewChunks != 2 || got.NewBytes != 2*dryChunk || got.KnownBytes != 6*dryChunk || got.NewStored <= 2*dryChunk {
		t.Errorf("dry run counted %+v, want 8 chunks, 2 new (%d bytes, stored compressed a little larger: random), %d known",
			got, 2*dryChunk, 6*dryChunk)
	}
	if _, ok := b.References()["disk.img"]; !ok {
		t.Error("the dry run picked no reference for disk.img")
	}
	snaps, err := s.Snapshots(dryGroup)
	if err != nil || len(snaps) != 1 {
		t.Fatalf("the group has %d snapshots after a dry run, want 1 (%v)", len(snaps), err)
	}
	check()
}

// A dry run on a local store leaves every file of the store as it was:
// names, sizes, modes and modification times.
func TestDryRunLocal(t *testing.T) {
	s := storetest.NewStore(t)
	var before map[string]string
	dryRunImage(t, s, func() {
		now := storetest.DirState(t, s.Root())
		if before == nil {
			before = now
			return
		}
		if d := storetest.DiffState(before, now); len(d) > 0 {
			t.Errorf("the dry run changed the store: %q", d)
		}
	})
}

// A dry run on a remote store makes no call that writes to the bucket
// (no writer registered, no lease, no chunk touched or put).
func TestDryRunRemoteWritesNothing(t *testing.T) {
	s, bucket := storetest.NewMemStore(t)
	var mu sync.Mutex
	var writes []string
	armed := false
	dryRunImage(t, s, func() {
		mu.Lock()
		defer mu.Unlock()
		if armed {
			if len(writes) > 0 {
				t.Errorf("the dry run wrote to the bucket: %q", writes)
			}
			return
		}
		armed = true
		bucket.SetHook(func(_ context.Context, c *memstore.Call) error {
			switch c.Op {
			case memstore.OpGet, memstore.OpHead, memstore.OpList, memstore.OpListKey:
			default:
				mu.Lock()
				writes = append(writes, string(c.Op)+" "+c.Key)
				mu.Unlock()
			}
			return nil
		})
	})
	bucket.SetHook(nil)
}
