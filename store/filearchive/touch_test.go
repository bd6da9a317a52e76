package filearchive

import (
	"os"
	"syscall"
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
// read and referenced: its stat table record's digest tells that its
// content did not change, whatever the size of the chunk that holds it.
// A record without a digest (a table of version 2, or of a store on a
// local disk: keepDigests): the file
// is compared with its previous content where its chunk is about its
// size, and in a chunk many times its size it is stored anew rather
// than the chunk decoded (cheapToCompare). All read right.
func TestTouchedCompare(t *testing.T) {
	for _, c := range []struct {
		chunkSize int
		digests   int
		reused    int64
	}{{64 << 10, 1, 30}, {1 << 20, 1, 30}, {64 << 10, 0, 30}, {1 << 20, 0, 29}} {
		src := t.TempDir()
		fileTree(t, src) // 30 files of 30,000 bytes
		s := newStore(t)
		opt := Options{ChunkSize: c.chunkSize, MaxPadding: -1, digests: c.digests}
		backupTree(t, s, src, opt)
		later := time.Now().Add(time.Hour)
		must(t, os.Chtimes(src+"/d2/f04", later, later))
		res, snap := backupTree(t, s, src, opt)
		if res.ReusedFiles != c.reused || res.ReadFiles != 1 {
			t.Errorf("chunks of %d, digests %v: reused %d files, read %d; want %d reused, 1 read", c.chunkSize,
				c.digests > 0, res.ReusedFiles, res.ReadFiles, c.reused)
		}
		compareTree(t, openTree(t, s, snap), src, nil, nil)
	}
}

// TestDigestChangedContent: with digests kept, a file changed to other
// content of the same size (and one changed back with its old mtime) is
// read and stored anew, one only touched is referenced; all read right.
func TestDigestChangedContent(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src)
	s := newStore(t)
	opt := Options{ChunkSize: 1 << 20, MaxPadding: -1, digests: 1}
	backupTree(t, s, src, opt)
	st, err := os.Stat(src + "/d1/f03")
	must(t, err)
	// The stat table keeps ctime seconds: a trusted record's ctime is at
	// least the margin (2 s) before its backup began, so a change after
	// it has a later second. These tests trust records at a margin of
	// 1 ns, so the rewrite is made again until the file's ctime (from
	// the kernel's coarse clock, which lags the time of day by a few ms)
	// is in a later second than the record's.
	ctimeSec := func(st os.FileInfo) int64 { return st.Sys().(*syscall.Stat_t).Ctim.Sec }
	for {
		writeFile(t, src+"/d1/f03", randBytes(30000, 1003)) // same size, new content
		must(t, os.Chtimes(src+"/d1/f03", st.ModTime(), st.ModTime()))
		now, err := os.Stat(src + "/d1/f03")
		must(t, err)
		if ctimeSec(now) > ctimeSec(st) {
			break
		}
		time.Sleep(time.Until(time.Unix(ctimeSec(now)+1, 0)))
	}
	later := time.Now().Add(time.Hour)
	must(t, os.Chtimes(src+"/d2/f04", later, later)) // touched only
	res, snap := backupTree(t, s, src, opt)
	if res.ReadFiles != 2 || res.ReusedFiles != 29 {
		t.Errorf("read %d files, reused %d; want 2 read, 29 reused", res.ReadFiles, res.ReusedFiles)
	}
	compareTree(t, openTree(t, s, snap), src, nil, nil)
}
