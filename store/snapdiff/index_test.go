package snapdiff

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
)

// TestComparePaths: sorting paths with comparePaths gives the order a
// walk in name order visits them (each directory's entries sorted
// byte-wise, a directory before its entries), which the merge relies on.
func TestComparePaths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", ".", "!", "a.b", "a-", "z", "\x01", "é"}
	var walk func(prefix string, depth int) []string
	walk = func(prefix string, depth int) []string {
		var names []string
		for range 1 + r.IntN(4) {
			n := alphabet[r.IntN(len(alphabet))] + alphabet[r.IntN(len(alphabet))]
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		var out []string
		for _, n := range names {
			p := prefix + n
			out = append(out, p)
			if depth < 3 && r.IntN(2) == 0 {
				out = append(out, walk(p+"/", depth+1)...)
			}
		}
		return out
	}
	for range 200 {
		order := append([]string{""}, walk("", 0)...)
		shuffled := slices.Clone(order)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		slices.SortFunc(shuffled, comparePaths)
		if !slices.Equal(shuffled, order) {
			t.Fatalf("sorted %q,\nwalk order %q", shuffled, order)
		}
	}
	if comparePaths("a/z", "a.b") >= 0 || comparePaths("a", "a/b") >= 0 || comparePaths("b", "a/z") <= 0 || comparePaths("x", "x") != 0 {
		t.Error("comparePaths on the plain cases")
	}
}

// fakeIndex is an in-memory index.Index of chunks of the given sizes.
type fakeIndex struct {
	digests []chunk.Digest
	ends    []int64
}

func newFakeIndex(chunks ...string) *fakeIndex {
	x := &fakeIndex{}
	var end int64
	for _, c := range chunks {
		var d chunk.Digest
		copy(d[:], c)
		end += int64(len(c)) * 100
		x.digests, x.ends = append(x.digests, d), append(x.ends, end)
	}
	return x
}

func (x *fakeIndex) Size() int64 { return x.ends[len(x.ends)-1] }
func (x *fakeIndex) Len() int    { return len(x.digests) }
func (x *fakeIndex) Chunk(i int) (chunk.Digest, int64, int64) {
	start := int64(0)
	if i > 0 {
		start = x.ends[i-1]
	}
	return x.digests[i], start, x.ends[i]
}
func (x *fakeIndex) Find(int64, int) int { return 0 }
func (x *fakeIndex) Csum() [32]byte      { return [32]byte{} }
func (x *fakeIndex) Path() string        { return "fake" }
func (x *fakeIndex) Err() error          { return nil }
func (x *fakeIndex) Close() error        { return nil }

var _ index.Index = (*fakeIndex)(nil)

// TestCompareIndexes: images compare chunk by chunk at the same place;
// other indexes by whether a chunk occurs anywhere in the old one.
func TestCompareIndexes(t *testing.T) {
	old := newFakeIndex("aa", "bb", "cc", "dd")
	for _, c := range []struct {
		y          *fakeIndex
		positional bool
		chunks     int
		bytes      int64
	}{
		{newFakeIndex("aa", "bb", "cc", "dd"), true, 0, 0},
		{newFakeIndex("aa", "xx", "cc", "dd", "ee"), true, 2, 400},
		{newFakeIndex("bb", "aa", "cc", "dd"), true, 2, 400},
		{newFakeIndex("bb", "aa", "cc", "dd"), false, 0, 0},
		{newFakeIndex("q", "aa", "bb", "ccc"), false, 2, 400},
		{newFakeIndex("aa"), true, 0, 0},
	} {
		chunks, bytes, err := Indexes(old, c.y, c.positional)
		if err != nil || chunks != c.chunks || bytes != c.bytes {
			t.Errorf("%q positional %v: %d chunks, %d bytes, %v; want %d, %d", c.y.digests, c.positional, chunks, bytes, err, c.chunks, c.bytes)
		}
	}
}
