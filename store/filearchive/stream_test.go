package filearchive

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
)

const testAvg = 64 << 10

// writeStream writes parts into a new stream at name: a []byte is
// written in random pieces, a []ChunkRef injected, nil suggests a cut.
func writeStream(t *testing.T, s *store.Store, dir, name string, parts ...any) *index.Dynamic {
	t.Helper()
	path := filepath.Join(dir, name)
	w, err := NewStreamWriter(context.Background(), s, path, StreamOptions{ChunkSize: testAvg, Workers: 2})
	must(t, err)
	rng := rand.New(rand.NewPCG(uint64(len(parts)), 5))
	for _, p := range parts {
		switch p := p.(type) {
		case []byte:
			for len(p) > 0 {
				n := min(len(p), 1+rng.IntN(100<<10))
				if k, err := w.Write(p[:n]); err != nil || k != n {
					t.Fatalf("write %d: %d, %v", n, k, err)
				}
				p = p[n:]
			}
		case []ChunkRef:
			must(t, w.Inject(p))
		case nil:
			must(t, w.SuggestCut())
		}
	}
	_, size, err := w.Close()
	must(t, err)
	x, err := index.OpenDynamic(path)
	must(t, err)
	t.Cleanup(func() { x.Close() })
	if size != x.Size() {
		t.Fatalf("close reported %d bytes, index holds %d", size, x.Size())
	}
	return x
}

func readIndex(t *testing.T, s *store.Store, x index.Index) []byte {
	t.Helper()
	c, err := store.NewCache(s, 16<<20)
	must(t, err)
	defer c.Close()
	var b bytes.Buffer
	if _, err := chunkcache.NewReader(context.Background(), x, c, 2).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func chunkEnds(x index.Index) []int64 {
	var ends []int64
	for i := 0; i < x.Len(); i++ {
		_, _, e := x.Chunk(i)
		ends = append(ends, e)
	}
	return ends
}

func refs(x index.Index) []ChunkRef {
	var out []ChunkRef
	for i := 0; i < x.Len(); i++ {
		d, s, e := x.Chunk(i)
		out = append(out, ChunkRef{Digest: d, Size: int(e - s)})
	}
	return out
}

// TestStreamCuts: however the stream is written, it is cut where the
// buzhash chunker cuts the whole of it.
func TestStreamCuts(t *testing.T) {
	s := newStore(t)
	data := randBytes(3<<20+5, 11)
	x := writeStream(t, s, t.TempDir(), "a.didx", data)
	ch, err := chunk.NewBuzhash(testAvg)
	must(t, err)
	var want []int64
	pos := 0
	for p := data; ; {
		n := ch.Scan(p)
		if n == 0 {
			break
		}
		pos += n
		want = append(want, int64(pos))
		p = p[n:]
	}
	want = append(want, int64(len(data)))
	if got := chunkEnds(x); !slices.Equal(got, want) {
		t.Fatalf("chunk ends %v, want %v", got, want)
	}
	if !bytes.Equal(readIndex(t, s, x), data) {
		t.Fatal("content differs")
	}
}

// TestStreamInject puts chunks of another stream between written data,
// at the start and at the end; the index keeps that order while uploads
// run in parallel.
func TestStreamInject(t *testing.T) {
	s := newStore(t)
	dir := t.TempDir()
	prevData := randBytes(1<<20, 12)
	prev := writeStream(t, s, dir, "prev.didx", prevData)
	old := refs(prev)
	a, c := randBytes(700<<10, 13), randBytes(300<<10, 14)
	x := writeStream(t, s, dir, "new.didx", old[:2], a, old, c, nil, old[len(old)-1:])
	first := old[0].Size + old[1].Size
	last := old[len(old)-1].Size
	want := slices.Concat(prevData[:first], a, prevData, c, prevData[len(prevData)-last:])
	if !bytes.Equal(readIndex(t, s, x), want) {
		t.Fatal("content differs")
	}
	got := refs(x)
	if !slices.Equal(got[:2], old[:2]) || !slices.Equal(got[len(got)-1:], old[len(old)-1:]) {
		t.Fatal("injected chunks not at the ends of the index")
	}
	if !slices.ContainsFunc(got[2:], func(r ChunkRef) bool { return r == old[2] }) {
		t.Fatal("injected run missing in the middle")
	}
}

// TestStreamSuggestCut: a suggested cut ends the chunk only past the
// minimum chunk size. (Zeros never make the hash cut.)
func TestStreamSuggestCut(t *testing.T) {
	s := newStore(t)
	dir := t.TempDir()
	small, big := make([]byte, testAvg/4-1), make([]byte, testAvg/4)
	x := writeStream(t, s, dir, "a.didx", small, nil, big, nil, small)
	want := []int64{int64(len(small) + len(big)), int64(2*len(small) + len(big))}
	if got := chunkEnds(x); !slices.Equal(got, want) {
		t.Fatalf("chunk ends %v, want %v", got, want)
	}
	if got := readIndex(t, s, x); len(got) != int(want[1]) || !chunk.IsZero(got) {
		t.Fatalf("content of %d bytes differs", len(got))
	}
}
