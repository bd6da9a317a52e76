package prune

import (
	"os"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestDryRunWouldFree: a dry run prices its plan: the chunks only the
// removed snapshots reference (one shared between two removed ones
// included, one shared with a kept one not) and their files.
func TestDryRunWouldFree(t *testing.T) {
	s := storetest.NewStore(t)
	g := store.Group{Type: "vm", ID: "100"}
	const cs = chunk.MinChunkSize
	blk := func(n string) []byte { return storetest.RandBytes(n, cs) }
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	// day 0: X S; day 1: S Y K; day 2 (kept): K Z
	snaps := []store.Snapshot{
		storetest.BackupImage(t, s, g, day0, storetest.Image{Data: cat(blk("X"), blk("S")), ChunkSize: cs}),
		storetest.BackupImage(t, s, g, day0.AddDate(0, 0, 1), storetest.Image{Data: cat(blk("S"), blk("Y"), blk("K")), ChunkSize: cs}),
		storetest.BackupImage(t, s, g, day0.AddDate(0, 0, 2), storetest.Image{Data: cat(blk("K"), blk("Z")), ChunkSize: cs}),
	}
	var want, files int64
	for _, n := range []string{"X", "S", "Y"} {
		ci, err := s.StatChunk(chunk.Sum(blk(n)))
		if err != nil {
			t.Fatal(err)
		}
		want += ci.Size
	}
	for _, snap := range snaps[:2] {
		ents, _ := os.ReadDir(s.SnapshotPath(snap))
		for _, e := range ents {
			fi, _ := e.Info()
			files += fi.Size()
		}
	}
	st, rep := runPrune(t, newManager(t, s), "start group=vm/100 keep-last=1 dry-run=1")
	f := rep.WouldFree
	if st.State != "ok" || f == nil {
		t.Fatalf("state %s, would free %+v, errors %v", st.State, f, st.Errors)
	}
	if f.Snapshots != 2 || f.Chunks != 3 || f.Stored != want || f.Logical != 3*cs || f.FileBytes != files || !f.StoredKnown || f.Error != "" {
		t.Errorf("would free %+v, want 2 snapshots, 3 chunks, %d stored, %d logical, %d file bytes", f, want, 3*cs, files)
	}
	_, rep = runPrune(t, newManager(t, s), "start group=vm/100 keep-last=1")
	if rep.WouldFree != nil || rep.Removed != 2 {
		t.Errorf("real prune: would free %+v, removed %d", rep.WouldFree, rep.Removed)
	}
}
