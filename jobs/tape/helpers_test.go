package tape

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

var (
	bg    = context.Background()
	quiet = slog.New(slog.DiscardHandler)
	t0    = time.Date(2024, 6, 1, 10, 0, 0, 0, time.UTC)
)

const testChunk = 64 << 10

var newStore = storetest.NewStore

// randBytes returns n reproducible random bytes for a name.
var randBytes = storetest.RandBytes

// backup writes a snapshot of an image (64 KiB chunks) and a config blob.
func backup(t *testing.T, s *store.Store, ns, id string, at time.Time, data []byte) string {
	t.Helper()
	conf, _ := chunk.EncodeBlob(nil, []byte("memory: 512\n"+id), true)
	g := store.Group{NS: store.NS(ns), Type: store.TypeVM, ID: id}
	return storetest.BackupImage(t, s, g, at, storetest.Image{Data: data, ChunkSize: testChunk,
		Blobs: map[string][]byte{"qemu-server.conf.blob": conf}}).String()
}

// fixture is a store with three snapshots sharing chunks: a, b (half of
// a's data plus new data) and c in a namespace.
type fixture struct {
	s       *store.Store
	src     *StoreSource
	a, b, c string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := newStore(t)
	da := randBytes("a", 1536<<10)
	db := append(append([]byte(nil), da[:768<<10]...), randBytes("b", 1024<<10)...)
	dc := append(append([]byte(nil), db[512<<10:]...), randBytes("c", 512<<10)...)
	f := &fixture{s: s, src: &StoreSource{S: s, StoreName: "store1"}}
	f.a = backup(t, s, "", "100", t0, da)
	f.b = backup(t, s, "", "100", t0.Add(time.Hour), db)
	f.c = backup(t, s, "prod", "200", t0, dc)
	return f
}

func openDrive(t *testing.T, dir string) *drive.Drive {
	t.Helper()
	d, err := drive.Open(bg, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func exportOpts(workers int) ExportOptions {
	return ExportOptions{Pool: "pool", PoolOptions: media.PoolOptions{TapeSize: 4 << 20, AutoCreate: true},
		Workers: workers, Logger: quiet}
}

// sameSnapshot compares every file of a snapshot in two stores.
func sameSnapshot(t *testing.T, a, b *store.Store, name string) {
	t.Helper()
	snap, err := ParseSnapshot(name)
	if err != nil {
		t.Fatal(err)
	}
	da, db := a.SnapshotPath(snap), b.SnapshotPath(snap)
	entries, err := os.ReadDir(da)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Name()[0] == '.' {
			continue
		}
		want, _ := os.ReadFile(filepath.Join(da, e.Name()))
		got, err := os.ReadFile(filepath.Join(db, e.Name()))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("snapshot %s file %s differs after restore (%v)", name, e.Name(), err)
		}
		n++
	}
	if n < 3 {
		t.Fatalf("snapshot %s: only %d files", name, n)
	}
}

// checkChunks loads and verifies every chunk the snapshot references.
func checkChunks(t *testing.T, src *StoreSource, s *store.Store, name string) {
	t.Helper()
	ds, err := src.Chunks(bg, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		b, err := s.ReadChunk(bg, d, store.ChunkOptions{})
		blob := b.Bytes()
		if err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
		if _, err := chunk.DecodeChunk(nil, blob, d, -1); err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
	}
}

// countingReporter records progress; it is called from several
// goroutines.
type countingReporter struct {
	items, bytes, errors atomic.Int64
	nopReporter
}

func (c *countingReporter) AddDone(items, bytes int64) { c.items.Add(items); c.bytes.Add(bytes) }
func (c *countingReporter) Errorf(string, ...any)      { c.errors.Add(1) }

func mustUUID(t *testing.T, s string) format.UUID {
	t.Helper()
	u, err := format.ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func openDriveB(b *testing.B) *drive.Drive {
	b.Helper()
	d, err := drive.Open(bg, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return d
}
