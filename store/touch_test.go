package store_test

import (
	"bytes"
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/storetest"
)

// The writer side of GC safety: every chunk a backup references is
// touched (or written) while it runs, and one found gone is written
// again from the data at hand.

var touchGroup = store.Group{Type: "vm", ID: "touch"}

const touchCS = 64 << 10

// touchImage is 8 random chunks, 2 all-zero chunks and a short tail.
func touchImage() []byte {
	data := storetest.RandBytes("touch", 10*touchCS+777)
	clear(data[3*touchCS : 5*touchCS])
	return data
}

// checkImage reads snap's image through a fresh cache (every chunk
// digest-checked) and compares it with want.
func checkImage(t *testing.T, s *store.Store, snap store.Snapshot, want []byte) {
	t.Helper()
	m, err := s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	c, err := store.NewCache(s, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got bytes.Buffer
	if _, err := chunkcache.NewReader(context.Background(), x, c, 0).WriteTo(&got); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("image of %s: %d bytes read (%v), want %d, equal %v", snap, got.Len(), err, len(want), bytes.Equal(got.Bytes(), want))
	}
}

func TestIncrementalImageTouchesKnownChunks(t *testing.T) {
	s := storetest.NewStore(t)
	data := touchImage()
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	first := storetest.BackupImage(t, s, touchGroup, at, storetest.Image{Data: data, ChunkSize: touchCS})
	old := storetest.AgeChunks(t, s, storetest.ChunksOf(t, s, first), 365*24*time.Hour)
	start := time.Now().Add(-time.Second) // coarse file system timestamps
	second := storetest.BackupImage(t, s, touchGroup, at.Add(time.Minute), storetest.Image{Data: data, ChunkSize: touchCS})
	ds := storetest.ChunksOf(t, s, second)
	storetest.CheckTouched(t, s, ds, start)
	for _, d := range ds {
		if fi, err := os.Stat(s.ChunkPath(d)); err != nil || !fi.ModTime().Equal(old) {
			t.Errorf("chunk %s: mtime changed by the touch (%v)", d, err)
		}
	}
	checkImage(t, s, second, data)
}

// TestKnownChunkGoneIsWritten: chunks of the previous snapshot a GC
// removed (a data chunk, the zero chunk) are written again by the next
// backup instead of being referenced missing.
func TestKnownChunkGoneIsWritten(t *testing.T) {
	s := storetest.NewStore(t)
	data := touchImage()
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	first := storetest.BackupImage(t, s, touchGroup, at, storetest.Image{Data: data, ChunkSize: touchCS})
	ds := storetest.ChunksOf(t, s, first)
	zero := chunk.ZeroDigest(touchCS)
	if ds[3] != zero || ds[4] != zero {
		t.Fatalf("chunks 3 and 4 are not the zero chunk: %v", ds)
	}
	for _, d := range []chunk.Digest{ds[1], zero} {
		if err := os.Remove(s.ChunkPath(d)); err != nil {
			t.Fatal(err)
		}
	}
	second := storetest.BackupImage(t, s, touchGroup, at.Add(time.Minute), storetest.Image{Data: data, ChunkSize: touchCS})
	for _, d := range []chunk.Digest{ds[1], zero} {
		if !storetest.HasChunk(t, s, d) {
			t.Errorf("chunk %s removed before the backup: not written again", d)
		}
	}
	checkImage(t, s, second, data)
	checkImage(t, s, first, data) // healed for the older snapshot too
}

// insertChunk stores a new chunk of 3000 bytes named by name.
func insertChunk(t *testing.T, s *store.Store, name string) (chunk.Digest, []byte) {
	t.Helper()
	data := storetest.RandBytes(name, 3000)
	d := chunk.Sum(data)
	blob, err := chunk.EncodeBlob(nil, data, true)
	if err != nil {
		t.Fatal(err)
	}
	if existed, err := s.InsertChunk(d, blob); err != nil || existed {
		t.Fatalf("insert of a new chunk: existed %v, %v", existed, err)
	}
	return d, blob
}

// TestInsertExistingTouches: inserting a chunk that exists keeps the file
// and refreshes its atime only; inserting one that is gone writes it.
func TestInsertExistingTouches(t *testing.T) {
	s := storetest.NewStore(t)
	d, blob := insertChunk(t, s, "insert")
	old := storetest.AgeChunks(t, s, []chunk.Digest{d}, 48*time.Hour)
	before, _ := s.StatChunk(d)
	if existed, err := s.InsertChunk(d, blob); err != nil || !existed {
		t.Fatalf("second insert: existed %v, %v", existed, err)
	}
	after, err := s.StatChunk(d)
	if err != nil || after.Inode != before.Inode || !after.Atime.After(old) {
		t.Fatalf("existing chunk: inode %d -> %d, atime %v -> %v (%v)", before.Inode, after.Inode, before.Atime, after.Atime, err)
	}
	if err := os.Remove(s.ChunkPath(d)); err != nil {
		t.Fatal(err)
	}
	if existed, err := s.InsertChunk(d, blob); err != nil || existed || !storetest.HasChunk(t, s, d) {
		t.Fatalf("insert of a removed chunk: existed %v, present %v, %v", existed, storetest.HasChunk(t, s, d), err)
	}
}

func TestRefreshChunk(t *testing.T) {
	s := storetest.NewStore(t)
	d, _ := insertChunk(t, s, "refresh")
	var f store.TouchFilter
	if ok, err := s.RefreshChunk(&f, d); !ok || err != nil || !f.Has(d) {
		t.Fatalf("present chunk: %v %v, in filter %v", ok, err, f.Has(d))
	}
	gone := chunk.Sum([]byte("gone"))
	if ok, err := s.RefreshChunk(&f, gone); ok || err != nil || f.Has(gone) {
		t.Fatalf("missing chunk: %v %v, in filter %v", ok, err, f.Has(gone))
	}
	if ok, err := s.RefreshChunk(nil, d); !ok || err != nil {
		t.Fatalf("nil filter: %v %v", ok, err)
	}
}

func TestTouchFilter(t *testing.T) {
	var f store.TouchFilter
	a := chunk.Sum([]byte("a"))
	if f.Has(a) {
		t.Fatal("empty filter holds a digest")
	}
	f.Add(a)
	if !f.Has(a) {
		t.Fatal("added digest not held")
	}
	// a digest of the same slot (first two bytes equal) evicts it
	b := a
	b[31] ^= 1
	f.Add(b)
	if f.Has(a) || !f.Has(b) {
		t.Fatalf("same slot: has a %v, has b %v", f.Has(a), f.Has(b))
	}
	if f.Has(chunk.Digest{}) {
		t.Fatal("the empty slot marker reads as a held digest")
	}
	var nilf *store.TouchFilter
	nilf.Add(a)
	if nilf.Has(a) {
		t.Fatal("nil filter holds a digest")
	}
}

// TestInsertRacesRemoval: a chunk removed between the insert's stat and
// its touch (as a GC's sweep may) is written, not an error; another
// goroutine removes the chunk file over and over meanwhile.
func TestInsertRacesRemoval(t *testing.T) {
	s := storetest.NewStore(t)
	d, blob := insertChunk(t, s, "race")
	stop := make(chan struct{})
	done := make(chan struct{})
	var removed atomic.Int64
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if os.Remove(s.ChunkPath(d)) == nil {
				removed.Add(1)
			}
		}
	}()
	// Insert until the remover has removed the chunk often enough (on a
	// loaded machine it may not run during the first thousands of
	// inserts), at least 5,000 times and at most a million.
	const minInserts, maxInserts, minRemoved = 5000, 1_000_000, 100
	i := 0
	for ; i < maxInserts && (i < minInserts || removed.Load() < minRemoved); i++ {
		if _, err := s.InsertChunk(d, blob); err != nil {
			close(stop)
			<-done
			t.Fatalf("insert %d beside removals: %v", i, err)
		}
	}
	close(stop)
	<-done
	if n := removed.Load(); n < minRemoved {
		t.Fatalf("the chunk was removed %d times in %d inserts: the test raced too little", n, i)
	}
}
