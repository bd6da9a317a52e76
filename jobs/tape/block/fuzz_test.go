package block

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// pieceSize is how many leading bytes of each block a fuzzed input
// holds: the header and a little payload; the rest of the block is zero,
// so that inputs stay small.
const pieceSize = 64

// pieceSource serves blocks made of pieceSize-byte pieces of data; a
// last, shorter piece is a block cut short by the end of the media.
type pieceSource struct{ data []byte }

func (s *pieceSource) ReadBlock(b []byte) error {
	if len(s.data) == 0 {
		return io.EOF
	}
	n := min(pieceSize, len(s.data))
	if n < pieceSize && len(b) == Size {
		s.data = nil
		return ErrTruncated
	}
	clear(b)
	copy(b, s.data[:n])
	s.data = s.data[n:]
	return nil
}

// pieces keeps the first pieceSize bytes of each block of a stream.
func pieces(stream []byte) []byte {
	var out []byte
	for len(stream) >= Size {
		out = append(out, stream[:pieceSize]...)
		stream = stream[Size:]
	}
	return out
}

// FuzzBlockReader reads arbitrary block sequences: no panic, only block
// errors, never more payload than the blocks hold, and what reads to the
// end writes back to a stream that reads the same.
func FuzzBlockReader(f *testing.F) {
	t := &testing.T{}
	for _, n := range []int{0, 3, pieceSize - HeaderSize, 2*PayloadSize + 5} {
		f.Add(pieces(writeStream(t, make([]byte, n))))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		blocks := (len(data) + pieceSize - 1) / pieceSize
		r, err := NewReader(&pieceSource{data: data}, "fuzz")
		if err != nil {
			checkBlockError(t, err)
			return
		}
		got, err := io.ReadAll(r)
		if len(got) > blocks*PayloadSize {
			t.Fatalf("%d payload bytes from %d blocks", len(got), blocks)
		}
		if err != nil {
			checkBlockError(t, err)
			return
		}
		back, err := io.ReadAll(mustReader(t, writeStream(t, got)))
		if err != nil || !bytes.Equal(back, got) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func mustReader(t *testing.T, stream []byte) *Reader {
	r, err := NewReader(StreamSource(bytes.NewReader(stream)), "again")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func checkBlockError(t *testing.T, err error) {
	for _, e := range []error{ErrForeign, ErrCorrupt, ErrTruncated, ErrEmptyFile} {
		if errors.Is(err, e) {
			return
		}
	}
	t.Fatalf("unexpected error %v", err)
}
