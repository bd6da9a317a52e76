// Package conformance is the storage conformance suite: what every
// Backend of a store (a local directory, a bucket) must do, run unchanged
// against each through the store's API (RunBackendSuite). It is imported
// by tests only; it is a package of its own because it backs up file
// archives (package filearchive), whose tests import storetest.
package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/storetest"
)

// RunBackendSuite runs the suite's tests as subtests, each on a fresh
// store from open.
func RunBackendSuite(t *testing.T, open func(t testing.TB) *store.Store) {
	runSuite(t, open, []suiteTest{
		{"InsertReadHas", testInsertReadHas},
		{"Missing", testMissing},
		{"Corrupt", testCorrupt},
		{"Touch", testTouch},
		{"Walk", testWalk},
		{"Image", testImage},
		{"FileArchive", testFileArchive},
	})
}

// suiteTest is one test of a suite, run on a fresh store.
type suiteTest struct {
	name string
	fn   func(*testing.T, *store.Store)
}

// runSuite runs tests as subtests, each on a fresh store from open.
func runSuite(t *testing.T, open func(t testing.TB) *store.Store, tests []suiteTest) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// blobOf encodes data as a compressed blob and returns it with its digest.
func blobOf(t testing.TB, data []byte) (chunk.Digest, []byte) {
	t.Helper()
	blob, err := chunk.EncodeBlob(nil, data, true)
	must(t, err)
	return chunk.Sum(data), blob
}

func testInsertReadHas(t *testing.T, s *store.Store) {
	ctx := context.Background()
	d, blob := blobOf(t, storetest.RandBytes("insert", 300<<10))
	if storetest.HasChunk(t, s, d) {
		t.Fatal("HasChunk of a chunk never inserted")
	}
	existed, err := s.InsertChunk(d, blob)
	must(t, err)
	if existed {
		t.Fatal("first insert: existed")
	}
	if !storetest.HasChunk(t, s, d) {
		t.Fatal("HasChunk false after the insert")
	}
	for _, direct := range []store.Direct{store.DirectUncached, store.DirectAlways, store.DirectUncached} {
		b, err := s.ReadChunk(ctx, d, store.ChunkOptions{Direct: direct})
		must(t, err)
		if !bytes.Equal(b.Bytes(), blob) {
			t.Fatalf("ReadChunk (direct %d): %d bytes differ from the %d inserted", direct, len(b.Bytes()), len(blob))
		}
		b.Release()
	}
	existed, err = s.InsertChunk(d, blob)
	must(t, err)
	if !existed {
		t.Fatal("second insert of the same chunk: not existed")
	}
	// an empty chunk is no chunk
	e := chunk.Sum([]byte("empty"))
	_, err = s.InsertChunk(e, nil)
	must(t, err)
	if storetest.HasChunk(t, s, e) {
		t.Fatal("HasChunk true for an empty chunk")
	}
}

func testMissing(t *testing.T, s *store.Store) {
	d := chunk.Sum([]byte("never stored"))
	_, err := s.ReadChunk(context.Background(), d, store.ChunkOptions{})
	if !errors.Is(err, store.ErrMissingChunk) || !errors.Is(err, fs.ErrNotExist) || !store.IsChunkError(err) {
		t.Fatalf("ReadChunk of a missing chunk: %v, want ErrMissingChunk and fs.ErrNotExist", err)
	}
	if err := s.TouchChunk(d); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("TouchChunk of a missing chunk: %v, want fs.ErrNotExist", err)
	}
	if ok, err := s.RefreshChunk(nil, d); ok || err != nil {
		t.Fatalf("RefreshChunk of a missing chunk: %v, %v; want false, nil", ok, err)
	}
	c, err := store.NewCache(s, 16<<20)
	must(t, err)
	defer c.Close()
	if _, err := c.Get(context.Background(), d, 100); !errors.Is(err, store.ErrMissingChunk) {
		t.Fatalf("Cache.Get of a missing chunk: %v", err)
	}
}

// testCorrupt stores blobs that do not hold their digest's data: the
// store gives them back as they are, and the cache refuses them as
// corrupt chunks.
func testCorrupt(t *testing.T, s *store.Store) {
	ctx := context.Background()
	_, otherBlob := blobOf(t, []byte("other data"))
	bad := map[string][]byte{
		"not a blob":    []byte("this is not a DataBlob at all"),
		"bad crc":       flipLast(otherBlob),
		"wrong content": otherBlob,
	}
	c, err := store.NewCache(s, 16<<20)
	must(t, err)
	defer c.Close()
	for name, blob := range bad {
		d := chunk.Sum([]byte("corrupt " + name))
		_, err := s.InsertChunk(d, blob)
		must(t, err)
		b, err := s.ReadChunk(ctx, d, store.ChunkOptions{})
		must(t, err)
		if !bytes.Equal(b.Bytes(), blob) {
			t.Errorf("%s: ReadChunk gave other bytes than stored", name)
		}
		b.Release()
		_, err = c.Get(ctx, d, 10)
		if !errors.Is(err, store.ErrCorruptChunk) {
			t.Errorf("%s: Cache.Get: %v, want ErrCorruptChunk", name, err)
		}
	}
}

func flipLast(b []byte) []byte {
	b = slices.Clone(b)
	b[len(b)-1] ^= 0xff
	return b
}

func testTouch(t *testing.T, s *store.Store) {
	d, blob := blobOf(t, []byte("touch me"))
	_, err := s.InsertChunk(d, blob)
	must(t, err)
	must(t, s.TouchChunk(d))
	var f store.TouchFilter
	ok, err := s.RefreshChunk(&f, d)
	if !ok || err != nil {
		t.Fatalf("RefreshChunk of a stored chunk: %v, %v", ok, err)
	}
	if !f.Has(d) {
		t.Fatal("RefreshChunk did not add the chunk to the filter")
	}
}

func testWalk(t *testing.T, s *store.Store) {
	var want []chunk.Digest
	for i := range 40 {
		d, blob := blobOf(t, storetest.RandSeeded(1000+i, uint64(i)))
		_, err := s.InsertChunk(d, blob)
		must(t, err)
		want = append(want, d)
	}
	var got []chunk.Digest
	must(t, s.WalkChunks(context.Background(), func(d chunk.Digest) error {
		got = append(got, d)
		return nil
	}))
	cmp := func(a, b chunk.Digest) int { return bytes.Compare(a[:], b[:]) }
	slices.SortFunc(want, cmp)
	slices.SortFunc(got, cmp)
	if !slices.Equal(got, want) {
		t.Fatalf("WalkChunks gave %d chunks, want the %d inserted", len(got), len(want))
	}
	stop := errors.New("stop")
	n := 0
	err := s.WalkChunks(context.Background(), func(chunk.Digest) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("WalkChunks after fn's error: %v after %d calls", err, n)
	}
}

var group = store.Group{Type: "host", ID: "conformance"}

// testImage backs an image up twice and reads it back: the second
// backup stores no chunk.
func testImage(t *testing.T, s *store.Store) {
	data := storetest.RandBytes("image", 6<<20)
	clear(data[2<<20 : 3<<20]) // a zero chunk
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	var first, second store.UploadStats
	snap := backupImage(t, s, at, data, &first)
	readImage(t, s, snap, data)
	if n := first.NewChunks.Load(); n < 5 {
		t.Fatalf("first backup stored %d chunks, want at least 5", n)
	}
	snap2 := backupImage(t, s, at.Add(time.Hour), data, &second)
	readImage(t, s, snap2, data)
	if n := second.NewChunks.Load(); n != 0 {
		t.Fatalf("second backup of the same data stored %d chunks, want 0", n)
	}
	if k := second.KnownBytes.Load(); k != int64(len(data)) {
		t.Fatalf("second backup: %d bytes known, want %d", k, len(data))
	}
}

func backupImage(t *testing.T, s *store.Store, at time.Time, data []byte, st *store.UploadStats) store.Snapshot {
	t.Helper()
	ctx := context.Background()
	f := storetest.TempFile(t, data)
	b, err := s.StartBackup(ctx, group, at)
	must(t, err)
	b.Sync = store.SyncNone
	if err := b.AddImage(ctx, "disk.img", f, store.ImageOptions{ChunkSize: 1 << 20, Stats: st}); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	must(t, b.Finish())
	return b.Snapshot()
}

func readImage(t *testing.T, s *store.Store, snap store.Snapshot, want []byte) {
	t.Helper()
	m, err := s.ReadManifest(snap)
	must(t, err)
	x, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
	must(t, err)
	defer x.Close()
	c, err := store.NewCache(s, 32<<20)
	must(t, err)
	defer c.Close()
	got, err := io.ReadAll(io.NewSectionReader(chunkcache.NewReader(context.Background(), x, c, s.Readahead()), 0, x.Size()))
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Fatalf("snapshot %s disk.img: %d bytes read back differ from the %d backed up", snap, len(got), len(want))
	}
}
