package filearchive

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/storetest"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var newStore = storetest.NewStore

var testGroup = store.Group{Type: "host", ID: "test"}

// snapTime gives each backup of a test its own second.
var snapTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func nextTime() time.Time {
	snapTime = snapTime.Add(time.Minute)
	return snapTime
}

// backupTree backs dir up as root.pxar into a new snapshot of testGroup.
func backupTree(t testing.TB, s *store.Store, dir string, opt Options) (Result, store.Snapshot) {
	t.Helper()
	return backupTreeKey(t, s, dir, opt, nil)
}

// backupTreeKey is backupTree encrypted with key (nil: plain).
func backupTreeKey(t testing.TB, s *store.Store, dir string, opt Options, key *crypt.Key) (Result, store.Snapshot) {
	t.Helper()
	ctx := context.Background()
	b, err := s.StartBackup(ctx, testGroup, nextTime())
	must(t, err)
	b.Sync = store.SyncNone
	if key != nil {
		must(t, b.Encrypt(key))
	}
	if opt.racyMargin == 0 {
		opt.racyMargin = time.Nanosecond // the test changes files after the backup, never during
	}
	res, err := AddArchive(ctx, b, "root.pxar", dir, opt)
	if err != nil {
		b.Abort()
		t.Fatal(err)
	}
	must(t, b.Finish())
	return res, b.Snapshot()
}

// openTree opens root.pxar of snap through a fresh cache.
func openTree(t testing.TB, s *store.Store, snap store.Snapshot) *pxar.Accessor {
	t.Helper()
	ctx := context.Background()
	m, err := s.ReadManifest(snap)
	must(t, err)
	c, err := store.NewCache(s, 64<<20)
	must(t, err)
	a, closeArchive, err := OpenName(ctx, s, snap, m, "root.pxar", c)
	must(t, err)
	t.Cleanup(func() { closeArchive(); c.Close() })
	return a
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, data, 0o644))
}

var randBytes = storetest.RandSeeded

// compareTree compares the archive with the source tree at root,
// user.* xattrs included (read from the source).
func compareTree(t testing.TB, a *pxar.Accessor, root string, want map[string]storetest.Want, skip func(rel string) bool) {
	t.Helper()
	storetest.CompareTree(t, a, root, storetest.TreeOptions{Want: want, SourceXattrs: true, Skip: skip})
}

var content = storetest.Content
