package pxar

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// filler is a ContentFiller payload stream in memory that reads in
// pieces of at most step bytes.
type filler struct {
	bytes.Buffer
	step int
	err  error // a write error of the stream
}

func (f *filler) Fill(r io.Reader, n int) (int, error, error) {
	if f.err != nil {
		return 0, nil, f.err
	}
	p := make([]byte, min(n, f.step))
	k, err := r.Read(p)
	f.Write(p[:k])
	return k, err, nil
}

// TestFillContent: a payload stream that reads file content itself
// (ContentFiller) gets the same archive as one written to, also when the
// reader fails or ends early (zero-filled, ContentError), and a stuck
// reader does not hang the encoder.
func TestFillContent(t *testing.T) {
	tree := dirNode("", fileNode("a", bytes.Repeat([]byte("x"), 1<<20+7)))
	data := tree.children[0].data
	readers := map[string]func() io.Reader{
		"whole": func() io.Reader { return bytes.NewReader(data) },
		"short": func() io.Reader { return io.LimitReader(bytes.NewReader(data), 300<<10+3) },
		"failing": func() io.Reader {
			return io.MultiReader(bytes.NewReader(data[:5000]), iotest.ErrReader(io.ErrClosedPipe))
		},
	}
	for name, open := range readers {
		var wantMeta, wantPayload bytes.Buffer
		wantErr := encodeOne(t, &wantMeta, &wantPayload, &tree.meta, &tree.children[0].meta, uint64(len(data)), open())
		for _, step := range []int{1 << 20, 64 << 10, 777} {
			var meta bytes.Buffer
			payload := &filler{step: step}
			err := encodeOne(t, &meta, payload, &tree.meta, &tree.children[0].meta, uint64(len(data)), open())
			if !bytes.Equal(meta.Bytes(), wantMeta.Bytes()) || !bytes.Equal(payload.Bytes(), wantPayload.Bytes()) {
				t.Fatalf("%s, step %d: archive differs from the written one", name, step)
			}
			var ce, wce *ContentError
			if errors.As(wantErr, &wce) != errors.As(err, &ce) || (ce != nil && ce.Written != wce.Written) {
				t.Fatalf("%s, step %d: error %v, written %v", name, step, err, wantErr)
			}
		}
	}
	var meta bytes.Buffer
	payload := &filler{step: 10}
	err := encodeOne(t, &meta, payload, &tree.meta, &tree.children[0].meta, 100, stuck{})
	var ce *ContentError
	if !errors.As(err, &ce) || !errors.Is(err, io.ErrNoProgress) || !bytes.Contains(payload.Bytes(), make([]byte, 100)) {
		t.Fatalf("stuck reader: %v, payload of %d bytes", err, payload.Len())
	}
	meta.Reset()
	broken := &filler{step: 10, err: errors.New("disk full")}
	e, err := NewEncoder(&meta, broken, &tree.meta)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddFile("a", &tree.children[0].meta, 100, bytes.NewReader(data)); err == nil || !errors.Is(err, broken.err) {
		t.Fatalf("write error of the stream: %v", err)
	}
}

// stuck is a reader that never delivers nor fails.
type stuck struct{}

func (stuck) Read([]byte) (int, error) { return 0, nil }

func encodeOne(t *testing.T, meta, payload io.Writer, root, m *Metadata, size uint64, r io.Reader) error {
	t.Helper()
	e, err := NewEncoder(meta, payload, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, ferr := e.AddFile("a", m, size, r); ferr != nil {
		var ce *ContentError
		if !errors.As(ferr, &ce) {
			t.Fatal(ferr)
		}
		err = ferr
	}
	// a second file, whose payload reference tells where the first ended
	if _, berr := e.AddFile("b", m, 5, bytes.NewReader([]byte("hello"))); berr != nil {
		t.Fatal(berr)
	}
	if cerr := e.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	return err
}
