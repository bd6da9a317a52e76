package filearchive

import (
	"os"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/storetest"
)

// TestReusedChunksTouched: a metadata-mode backup that reads nothing
// refreshes the atime of every chunk it references (the previous
// snapshot's, reused without a read), which keeps them from a GC running
// beside it.
func TestReusedChunksTouched(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src)
	s := newStore(t)
	opt := Options{ChunkSize: 64 << 10, MaxPadding: -1}
	_, first := backupTree(t, s, src, opt)
	storetest.AgeChunks(t, s, storetest.ChunksOf(t, s, first), 365*24*time.Hour)
	start := time.Now().Add(-time.Second) // coarse file system timestamps
	res, second := backupTree(t, s, src, opt)
	if res.Mode != ModeMetadata || res.ReadFiles != 0 || res.ReusedFiles != 30 {
		t.Fatalf("unchanged tree: %+v", res)
	}
	storetest.CheckTouched(t, s, storetest.ChunksOf(t, s, second), start)
}

// TestReusedChunkGone: a payload chunk of the previous snapshot a GC
// removed is not referenced missing: the files it held are read again,
// and the new snapshot reads back whole.
func TestReusedChunkGone(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src)
	s := newStore(t)
	opt := Options{ChunkSize: 64 << 10, MaxPadding: -1}
	_, first := backupTree(t, s, src, opt)
	payload := storetest.ChunksOf(t, s, first, "root.ppxar.didx")
	if len(payload) < 3 {
		t.Fatalf("payload of %d chunks", len(payload))
	}
	gone := payload[len(payload)/2]
	must(t, os.Remove(s.ChunkPath(gone)))
	res, second := backupTree(t, s, src, opt)
	if res.ReadFiles == 0 || res.ReusedFiles == 30 {
		t.Fatalf("the files of a removed chunk were not read again: %+v", res)
	}
	for _, d := range storetest.ChunksOf(t, s, second) {
		if !storetest.HasChunk(t, s, d) {
			t.Errorf("chunk %s referenced by %s is missing", d, second)
		}
	}
	compareTree(t, openTree(t, s, second), src, nil, nil)
}

// TestTouchedCompare: a file touched without a change of content is
// compared with its previous content and referenced where its chunk is
// about its size; in a chunk many times its size it is stored anew
// rather than the chunk decoded (cheapToCompare). Both read right.
func TestTouchedCompare(t *testing.T) {
	for _, c := range []struct {
		chunkSize int
		reused    int64
	}{{64 << 10, 30}, {1 << 20, 29}} {
		src := t.TempDir()
		fileTree(t, src) // 30 files of 30,000 bytes
		s := newStore(t)
		opt := Options{ChunkSize: c.chunkSize, MaxPadding: -1}
		backupTree(t, s, src, opt)
		later := time.Now().Add(time.Hour)
		must(t, os.Chtimes(src+"/d2/f04", later, later))
		res, snap := backupTree(t, s, src, opt)
		if res.ReusedFiles != c.reused || res.ReadFiles != 1 {
			t.Errorf("chunks of %d: reused %d files, read %d; want %d reused, 1 read", c.chunkSize, res.ReusedFiles,
				res.ReadFiles, c.reused)
		}
		compareTree(t, openTree(t, s, snap), src, nil, nil)
	}
}
