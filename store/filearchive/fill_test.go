package filearchive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
)

// shortReader returns at most a random number of bytes per Read, and
// sometimes none.
type shortReader struct {
	r   io.Reader
	rng *rand.Rand
}

func (s *shortReader) Read(p []byte) (int, error) {
	if s.rng.IntN(8) == 0 {
		return 0, nil
	}
	return s.r.Read(p[:min(len(p), 1+s.rng.IntN(200<<10))])
}

// TestStreamFill: content read straight into the stream (Fill), mixed
// with writes, injections and suggested cuts, is cut and stored exactly
// as the same bytes written with Write are: the same index, the same
// chunks.
func TestStreamFill(t *testing.T) {
	s := newStore(t)
	dir := t.TempDir()
	prev := refs(writeStream(t, s, dir, "prev.didx", randBytes(300<<10, 20)))
	a, b, c := randBytes(3<<20+5, 21), randBytes(100, 22), randBytes(900<<10, 23)
	want := writeStream(t, s, dir, "want.didx", a, nil, b, prev, c, nil)

	path := filepath.Join(dir, "got.didx")
	w, err := NewStreamWriter(context.Background(), s, path, StreamOptions{ChunkSize: testAvg, Workers: 2})
	must(t, err)
	rng := rand.New(rand.NewPCG(7, 8))
	fill := func(p []byte) {
		r := &shortReader{r: bytes.NewReader(p), rng: rng}
		for done := 0; done < len(p); {
			k, rerr, werr := w.Fill(r, min(len(p)-done, 1+rng.IntN(1<<20)))
			must(t, werr)
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				t.Fatal(rerr)
			}
			done += k
		}
	}
	fill(a[:1<<20])
	if _, err := w.Write(a[1<<20:]); err != nil {
		t.Fatal(err)
	}
	must(t, w.SuggestCut())
	fill(b)
	must(t, w.Inject(prev))
	fill(c)
	must(t, w.SuggestCut())
	_, size, err := w.Close()
	must(t, err)
	got, err := index.OpenDynamic(path)
	must(t, err)
	defer got.Close()
	if size != want.Size() || !slices.Equal(refs(got), refs(want)) {
		t.Fatalf("Fill's index (%d bytes, %d chunks) differs from Write's (%d bytes, %d chunks)",
			size, got.Len(), want.Size(), want.Len())
	}
	if !bytes.Equal(readIndex(t, s, got), readIndex(t, s, want)) {
		t.Fatal("content differs")
	}
}

// TestStreamFillBounds: a Fill never reads past the largest chunk (the
// stage does not grow by copying), a reader that claims more bytes than
// it was given fails the read, not the stream, and a failed stream
// fails every Fill.
func TestStreamFillBounds(t *testing.T) {
	s := newStore(t)
	w, err := NewStreamWriter(context.Background(), s, filepath.Join(t.TempDir(), "a.didx"),
		StreamOptions{ChunkSize: chunk.MinChunkSize, Workers: 1})
	must(t, err)
	defer w.Abort()
	zeros := make([]byte, 8*chunk.MinChunkSize)
	for range 3 { // zeros never cut by hash: only at the largest chunk
		k, rerr, werr := w.Fill(bytes.NewReader(zeros), len(zeros))
		must(t, rerr)
		must(t, werr)
		if k > w.maxCut || cap(w.stage) != w.maxCut {
			t.Fatalf("read %d bytes, stage capacity %d; largest chunk %d", k, cap(w.stage), w.maxCut)
		}
	}
	if k, rerr, werr := w.Fill(liar{}, 10); k != 0 || rerr == nil || werr != nil {
		t.Fatalf("lying reader: %d, %v, %v", k, rerr, werr)
	}
	w.err = errors.New("failed")
	if _, _, werr := w.Fill(bytes.NewReader(zeros), 10); werr != w.err {
		t.Fatalf("Fill on a failed stream: %v", werr)
	}
}

type liar struct{}

func (liar) Read(p []byte) (int, error) { return len(p) + 1, nil }
