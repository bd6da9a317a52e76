package s3store

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/digestsort"
)

// The sweep's merge-join decides each listed object against the marked
// set: marked chunks stay; unmarked ones go when older than the cutoff
// and stay (pending, or on disk when newer than the mark's start)
// otherwise; a .bad copy stays while it is the only copy of a marked
// chunk and goes like garbage otherwise; marked digests with no chunk
// are missing, including after the last object; a listing out of key
// order stops the sweep.
func TestSweepJoin(t *testing.T) {
	var ds []chunk.Digest
	for i := range 8 {
		ds = append(ds, chunk.Sum([]byte{byte(i)}))
	}
	slices.SortFunc(ds, func(a, b chunk.Digest) int { return bytes.Compare(a[:], b[:]) })
	phase1 := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	cut := phase1.Add(-time.Hour)
	old, pending, fresh := cut.Add(-time.Minute), cut.Add(time.Minute), phase1.Add(time.Second)
	// marked: 0 (present), 2 (only a .bad copy), 4 (missing), 5 (present, with a .bad copy), 7 (missing, last)
	s := digestsort.New(t.TempDir())
	for _, i := range []int{0, 2, 4, 5, 7, 0} {
		s.Add(ds[i])
	}
	m, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var missing []chunk.Digest
	var n store.SweepCounts
	c := &remoteCollector{marked: m, start: store.GCStart{Phase1: phase1, Cutoff: cut}}
	j := sweepJoin{c: c, opt: store.SweepOptions{Missing: func(d chunk.Digest) { missing = append(missing, d) }}, n: &n}
	if err := j.nextMarked(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		i        int
		bad      bool
		modified time.Time
		del      bool
	}{
		{0, false, old, false}, // marked
		{1, false, old, true},  // garbage
		{2, true, old, false},  // the only copy of a marked chunk
		{3, false, pending, false},
		{3, true, old, true}, // a .bad copy of an unmarked chunk
		{5, false, old, false},
		{5, true, old, true}, // a good copy exists
		{6, false, fresh, false},
	} {
		if err := j.advance(ds[tc.i]); err != nil {
			t.Fatal(err)
		}
		if del := j.decide(ds[tc.i], tc.bad, 10, tc.modified); del != tc.del {
			t.Errorf("chunk %d (bad %v): delete %v, want %v", tc.i, tc.bad, del, tc.del)
		}
	}
	if err := j.finish(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(missing, []chunk.Digest{ds[2], ds[4], ds[7]}) || n.MissingChunks != 3 {
		t.Errorf("missing %v (%d), want chunks 2, 4 and 7", missing, n.MissingChunks)
	}
	if n.Files != 8 || n.DiskChunks != 3 || n.PendingChunks != 1 || n.StillBad != 1 {
		t.Errorf("counts %+v", n)
	}
	if err := j.advance(ds[3]); err == nil {
		t.Error("a listing out of key order went on")
	}
}

func TestParseChunkKey(t *testing.T) {
	d := chunk.Sum([]byte("x"))
	h := d.String()
	for _, tc := range []struct {
		key     string
		bad, ok bool
	}{
		{".chunks/" + h[:4] + "/" + h, false, true},
		{".chunks/" + h[:4] + "/" + h + ".3.bad", true, true},
		{".chunks/" + h[:4] + "/" + h + ".tmp_x", false, false},
		{".chunks/0000/" + h, false, false},
		{".chunks/" + h[:4] + "/" + h[:63], false, false},
		{".chunks/" + h[:4] + "/" + h[:63] + "G", false, false},
		{".chunks/" + h[:4] + h, false, false},
		{"x/" + h[:4] + "/" + h, false, false},
		{".chunks/" + h[:4] + "/sub/" + h, false, false},
	} {
		got, bad, ok := parseChunkKey(tc.key)
		if ok != tc.ok || bad != tc.bad || ok && got != d {
			t.Errorf("%q: %s %v %v", tc.key, got, bad, ok)
		}
	}
}
