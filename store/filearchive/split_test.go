package filearchive

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/storetest"
)

// splitTree writes many one-line files with a few larger ones among
// them, so that payload chunks end inside PAYLOAD items.
func splitTree(t *testing.T, src string) int {
	n := 0
	for d := range 4 {
		for f := range 300 {
			data := fmt.Appendf(nil, "line %d %d\n", d, f)
			if f%97 == 5 {
				data = randBytes(20000+f, uint64(d*1000+f))
			}
			writeFile(t, fmt.Sprintf("%s/d%d/f%03d", src, d, f), data)
			n++
		}
	}
	return n
}

// TestSplitRunsReused: runs of unchanged files that the limits split
// (here every 25 files, in chunks holding hundreds) are all reused, with
// no padding but the previous stream's start and end markers and nothing
// read: the files that lie in the chunks already
// injected are referenced there, the next run injects only the chunks
// after them. With a payload chunk gone the files it held are read again
// (the run that continued past the mirror is written anew), and each
// snapshot reads back whole.
func TestSplitRunsReused(t *testing.T) {
	src := t.TempDir()
	n := splitTree(t, src)
	s := newStore(t)
	opt := Options{ChunkSize: 64 << 10, runFiles: 25}
	first, snap1 := backupTree(t, s, src, opt)
	if first.ReadFiles != int64(n) {
		t.Fatalf("first backup %+v", first)
	}
	res, snap2 := backupTree(t, s, src, opt)
	if res.ReadFiles != 0 || res.ReusedFiles != int64(n) || res.PaddingBytes > 2*pxar.HeaderSize || res.InjectedBytes != first.PayloadSize {
		t.Fatalf("unchanged tree, runs split: %+v (first %+v)", res, first)
	}
	// Each previous chunk once, in order, between the new stream's own
	// start and end markers.
	if got, want := storetest.ChunksOf(t, s, snap2, "root.ppxar.didx"), storetest.ChunksOf(t, s, snap1, "root.ppxar.didx"); len(got) != len(want)+2 || !slices.Equal(got[1:len(got)-1], want) {
		t.Errorf("payload chunks %v, the first backup's %v", got, want)
	}
	compareTree(t, openTree(t, s, snap2), src, nil, nil)

	payload := storetest.ChunksOf(t, s, snap2, "root.ppxar.didx")
	if len(payload) < 3 {
		t.Fatalf("payload of %d chunks", len(payload))
	}
	must(t, os.Remove(s.ChunkPath(payload[len(payload)/2])))
	res, snap3 := backupTree(t, s, src, opt)
	if res.ReadFiles == 0 || res.ReusedFiles+res.ReadFiles != int64(n) {
		t.Fatalf("a chunk gone: %+v", res)
	}
	for _, d := range storetest.ChunksOf(t, s, snap3) {
		if !storetest.HasChunk(t, s, d) {
			t.Errorf("chunk %s referenced by %s is missing", d, snap3)
		}
	}
	compareTree(t, openTree(t, s, snap3), src, nil, nil)
}
