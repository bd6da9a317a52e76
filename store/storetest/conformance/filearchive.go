package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/storetest"
)

// testFileArchive backs a tree with every kind of entry up twice as a
// file archive and compares each snapshot with the tree: the second
// backup stores no chunk.
func testFileArchive(t *testing.T, s *store.Store) {
	src := t.TempDir()
	want := storetest.RichTree(t, src)
	// files changed within 2 s of a backup's start are marked racy in its
	// stat table: let both backups find the tree settled, so that they
	// write the same streams
	time.Sleep(2100 * time.Millisecond)
	at := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	var first, second store.UploadStats
	snap := backupTree(t, s, src, at, &first)
	compareTree(t, s, snap, src, want)
	if first.NewChunks.Load() == 0 {
		t.Fatal("first backup stored no chunk")
	}
	snap2 := backupTree(t, s, src, at.Add(time.Hour), &second)
	compareTree(t, s, snap2, src, want)
	if n := second.NewChunks.Load(); n != 0 {
		t.Fatalf("second backup of the same tree stored %d chunks, want 0", n)
	}
}

func backupTree(t *testing.T, s *store.Store, src string, at time.Time, st *store.UploadStats) store.Snapshot {
	t.Helper()
	ctx := context.Background()
	b, err := s.StartBackup(ctx, group, at)
	must(t, err)
	b.Sync = store.SyncNone
	res, err := filearchive.AddArchive(ctx, b, "root.pxar", src, filearchive.Options{
		Mode: filearchive.ModeData, ChunkSize: 64 << 10, Stats: st})
	if err != nil {
		b.Abort()
		t.Fatal(err)
	}
	if res.Errors != 0 {
		b.Abort()
		t.Fatalf("backup of %s: %d errors", src, res.Errors)
	}
	must(t, b.Finish())
	return b.Snapshot()
}

func compareTree(t *testing.T, s *store.Store, snap store.Snapshot, src string, want map[string]storetest.Want) {
	t.Helper()
	ctx := context.Background()
	m, err := s.ReadManifest(snap)
	must(t, err)
	c, err := store.NewCache(s, 32<<20)
	must(t, err)
	defer c.Close()
	a, closeArchive, err := filearchive.OpenName(ctx, s, snap, m, "root.pxar", c)
	must(t, err)
	defer closeArchive()
	storetest.CompareTree(t, a, src, storetest.TreeOptions{Want: want, SourceXattrs: true})
}
