package filearchive

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
)

// fakeIndex is a previous payload index made of chunks of given sizes;
// chunks with the same name share a digest.
type fakeIndex struct {
	digests []chunk.Digest
	ends    []int64
}

func newFakeIndex() *fakeIndex { return &fakeIndex{} }

// add appends a chunk named name of size bytes.
func (x *fakeIndex) add(name string, size int64) *fakeIndex {
	var d chunk.Digest
	copy(d[:], name)
	end := size
	if n := len(x.ends); n > 0 {
		end += x.ends[n-1]
	}
	x.digests, x.ends = append(x.digests, d), append(x.ends, end)
	return x
}

func (x *fakeIndex) Len() int { return len(x.ends) }
func (x *fakeIndex) Chunk(i int) (chunk.Digest, int64, int64) {
	start := int64(0)
	if i > 0 {
		start = x.ends[i-1]
	}
	return x.digests[i], start, x.ends[i]
}
func (x *fakeIndex) Find(off int64, _ int) int {
	return sort.Search(len(x.ends), func(i int) bool { return x.ends[i] > off })
}

// planOf plans reuse of x for files given as [from, to) spans.
func planOf(x *fakeIndex, maxPadding float64, files ...span) *reusePlan {
	u := newChunkUses(x.Len())
	for _, f := range files {
		u.add(x, f)
	}
	return u.plan(x, maxPadding)
}

func retiredOf(p *reusePlan) string {
	s := ""
	for _, r := range p.retired {
		s += map[bool]string{true: "R", false: "."}[r]
	}
	return s
}

// TestPlanNoPadding: chunks full of live files are all reused.
func TestPlanNoPadding(t *testing.T) {
	x := newFakeIndex().add("a", 100).add("b", 100).add("c", 100)
	p := planOf(x, 0.01, span{0, 150}, span{150, 300})
	if p.padding != 0 || p.live != 300 || p.distinct != 300 || p.retiredChunks != 0 {
		t.Fatalf("plan %+v", p)
	}
}

// TestPlanScattered: files dead here and there leave padding in many
// chunks; past the bound the least live go first, until the padding is
// under 4/5 of it.
func TestPlanScattered(t *testing.T) {
	x := newFakeIndex()
	var files []span
	for i := range 10 { // chunk i holds 10 files of 10 bytes; i of them are gone
		x.add(fmt.Sprint("c", i), 100)
		for f := range 10 {
			if f >= i {
				from := uint64(100*i + 10*f)
				files = append(files, span{from, from + 10})
			}
		}
	}
	loose := planOf(x, 1, files...)
	if loose.retiredChunks != 0 || loose.padding != 450 || loose.live != 550 {
		t.Fatalf("no bound crossed: %+v", loose)
	}
	p := planOf(x, 0.5, files...)
	// padding 450 > 275: retire 9 (pad 360), 8 (280), 7 (210 <= 220)
	if got := retiredOf(p); got != ".......RRR" {
		t.Fatalf("retired %s, want the three least live", got)
	}
	if p.retiredLive != 10+20+30 {
		t.Errorf("files read again: %d bytes", p.retiredLive)
	}
}

// TestPlanStraddling: retiring a chunk reads the file that crosses into
// its neighbour again, which then pads the neighbour; the plan counts it
// and retires until the bound holds.
func TestPlanStraddling(t *testing.T) {
	x := newFakeIndex().add("a", 100).add("b", 100).add("c", 100)
	files := []span{{0, 10}, {90, 150}, {150, 160}, {200, 300}}
	p := planOf(x, 0.5, files...)
	// live a 20, b 60, c 100: padding 80+40 = 120 > 90: retire a (least
	// live): its files (0-10, 90-150) go, b keeps 10: padding 90 > 72:
	// retire b: padding 0.
	if got := retiredOf(p); got != "RR." {
		t.Fatalf("retired %s", got)
	}
	for _, f := range files {
		want := f.from >= 200
		if got := p.reusable(x, f.from, f.to); got != want {
			t.Errorf("file %v reusable %v, want %v", f, got, want)
		}
	}
}

// TestPlanSharedChunk: a chunk injected at several places (runs split
// by changed files) is one chunk: its size counts once, the live bytes
// of all its places together, and retiring it retires every place.
func TestPlanSharedChunk(t *testing.T) {
	x := newFakeIndex().add("a", 100).add("n1", 10).add("a", 100).add("n2", 10).add("a", 100)
	// the first place serves bytes 0-30 of a, the second 40-70, the third 80-100
	files := []span{{0, 30}, {100, 110}, {150, 180}, {210, 220}, {300, 320}}
	p := planOf(x, 0.5, files...)
	if p.distinct != 120 || p.live != 100 || p.padding != 20 || p.retiredChunks != 0 {
		t.Fatalf("plan %+v", p)
	}
	// 40 of a's bytes dead in every place
	p = planOf(x, 0.1, span{0, 30}, span{100, 110}, span{150, 160}, span{210, 220}, span{300, 320})
	if got := retiredOf(p); got != "R.R.R" {
		t.Fatalf("retired %s", got)
	}
}

// TestScatteredChanges backs up a tree of many small files in large
// chunks, changes one file in each chunk, and checks that the next
// backup reads and stores only those files (the chunks around them are
// reused, however many changed files split them), within the bound,
// and that the archive is right.
func TestScatteredChanges(t *testing.T) {
	src := t.TempDir()
	for d := range 8 {
		for f := range 40 {
			writeFile(t, filepath.Join(src, fmt.Sprint("d", d), fmt.Sprintf("f%02d", f)), randBytes(4000+100*f, uint64(40*d+f)))
		}
	}
	s := newStore(t)
	opt := Options{ChunkSize: 256 << 10}
	backupTree(t, s, src, opt)
	var changed int64
	for d := range 8 {
		p := filepath.Join(src, fmt.Sprint("d", d), fmt.Sprintf("f%02d", 5*d%40))
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		must(t, err)
		_, err = f.WriteString("one more line\n")
		must(t, f.Close())
		must(t, err)
		st, _ := os.Stat(p)
		changed += st.Size()
	}
	must(t, os.Rename(filepath.Join(src, "d7"), filepath.Join(src, "d7-renamed"))) // read again: new paths
	var renamed int64
	ents, _ := os.ReadDir(filepath.Join(src, "d7-renamed"))
	for _, e := range ents {
		info, _ := e.Info()
		renamed += info.Size()
	}
	stats := new(store.UploadStats)
	opt.Stats = stats
	res, snap := backupTree(t, s, src, opt)
	if res.ReadFiles != 7+40 || res.ReadBytes > changed+renamed {
		t.Errorf("read %d files (%d bytes), want the 7 changed and the 40 renamed", res.ReadFiles, res.ReadBytes)
	}
	tot := stats.Snapshot()
	// new payload: what was read (each changed file alone between
	// reused chunks), plus the metadata stream and the stat table
	if limit := changed + renamed + res.MetaSize + res.StatSize + 64<<10; tot.NewBytes > limit {
		t.Errorf("stored %d new bytes for %d read; limit %d", tot.NewBytes, res.ReadBytes, limit)
	}
	if live := res.ReusedBytes + 16*res.ReusedFiles; float64(res.PaddingBytes) > DefaultMaxPadding*float64(live) {
		t.Errorf("padding %d for %d live bytes", res.PaddingBytes, live)
	}
	compareTree(t, openTree(t, s, snap), src, nil, nil)
}
