package filearchive

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar/walk"
)

// A first (data) and a second (metadata mode) backup store the same
// streams, chunk for chunk, with the walk's read-ahead helper and
// without it.
func TestReadAheadSameIndexes(t *testing.T) {
	dir := t.TempDir()
	for i := range 200 {
		writeFile(t, fmt.Sprintf("%s/d%d/f%03d", dir, i%9, i), randBytes(i*997%60_000, uint64(i)))
	}
	writeFile(t, dir+"/big", randBytes(5<<20, 7))
	files := []string{"/d0/f000", "/d3/f012"} // changed for the second backup
	streams := []string{"root.mpxar.didx", "root.ppxar.didx", StatTableName("root.pxar")}
	stores := [2]*store.Store{newStore(t), newStore(t)}
	for round := range 2 {
		if round == 1 {
			for _, f := range files {
				writeFile(t, dir+f, randBytes(3000, uint64(round)))
			}
		}
		var got [2][]string // the same tree backed up without and with the helper
		for k, off := range []bool{true, false} {
			opt := Options{ChunkSize: 1 << 20, ReadAhead: walk.ReadAhead{Off: off, StatAhead: true}}
			res, snap := backupTree(t, stores[k], dir, opt)
			if round == 1 && (res.Mode != ModeMetadata || res.ReusedFiles == 0 || res.ReadFiles == 0) {
				t.Fatalf("second backup: %+v", res)
			}
			got[k] = indexChunks(t, stores[k], snap, streams)
		}
		if !slices.Equal(got[0], got[1]) {
			t.Errorf("backup %d: streams differ with read-ahead:\n%q\n%q", round+1, got[0], got[1])
		}
	}
}

// indexChunks lists each stream's chunks as "stream digest end".
func indexChunks(t *testing.T, s *store.Store, snap store.Snapshot, files []string) []string {
	var out []string
	for _, f := range files {
		x, err := s.OpenIndexFile(snap, f)
		must(t, err)
		for i := range x.Len() {
			d, end, _ := x.Chunk(i)
			out = append(out, fmt.Sprintf("%s %s %d", f, d, end))
		}
		x.Close()
	}
	return out
}
