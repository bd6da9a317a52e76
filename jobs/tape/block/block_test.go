package block

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"syscall"
	"testing"
)

// memDevice is a tape file in memory: leomAt is the first block index that
// reports LEOM (0: never), max the number of blocks that fit (0: no limit).
type memDevice struct {
	buf      bytes.Buffer
	blocks   int
	leomAt   int
	max      int
	filemark bool
}

func (d *memDevice) WriteBlock(b []byte) (bool, error) {
	if len(b) != Size {
		return false, errors.New("wrong block size")
	}
	if d.max > 0 && d.blocks >= d.max {
		return false, ErrEndOfMedia
	}
	d.buf.Write(b)
	d.blocks++
	return d.leomAt > 0 && d.blocks > d.leomAt, nil
}

func (d *memDevice) WriteFilemark() error {
	if d.filemark {
		return errors.New("second file mark")
	}
	d.filemark = true
	return nil
}

func randomData(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func writeStream(t *testing.T, data []byte) []byte {
	t.Helper()
	dev := &memDevice{}
	w := NewWriter(dev)
	if n, err := w.Write(data); err != nil || n != len(data) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if err := w.Finish(false); err != nil {
		t.Fatal(err)
	}
	if !dev.filemark {
		t.Fatal("no file mark written")
	}
	if want := len(data)/PayloadSize + 1; dev.blocks != want || w.Blocks() != want {
		t.Fatalf("blocks = %d (writer %d), want %d", dev.blocks, w.Blocks(), want)
	}
	if w.BytesWritten() != int64(dev.buf.Len()) {
		t.Fatalf("BytesWritten = %d, device has %d", w.BytesWritten(), dev.buf.Len())
	}
	return dev.buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, n := range []int{0, 3, PayloadSize - 1, PayloadSize, PayloadSize + 1, 3*PayloadSize + 17} {
		data := randomData(t, n)
		tape := writeStream(t, data)
		r, err := NewReader(StreamSource(bytes.NewReader(tape)), "test")
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d bytes, differ", n, len(got))
		}
		if !r.Ended() || r.Incomplete() {
			t.Fatalf("%d bytes: ended=%v incomplete=%v", n, r.Ended(), r.Incomplete())
		}
	}
}

func TestSmallReads(t *testing.T) {
	tape := writeStream(t, []byte("ABC"))
	r, err := NewReader(StreamSource(bytes.NewReader(tape)), "test")
	if err != nil {
		t.Fatal(err)
	}
	var one [1]byte
	for _, want := range []byte("ABC") {
		if n, err := r.Read(one[:]); n != 1 || err != nil || one[0] != want {
			t.Fatalf("Read = %d %q %v, want %q", n, one[0], err, want)
		}
	}
	for range 2 {
		if n, err := r.Read(one[:]); n != 0 || err != io.EOF {
			t.Fatalf("Read at end = %d, %v", n, err)
		}
	}
}

func TestLEOMStopsAtBlockBoundary(t *testing.T) {
	dev := &memDevice{leomAt: 2, max: 4}
	w := NewWriter(dev)
	data := randomData(t, 5*PayloadSize)
	n, err := w.Write(data)
	if !errors.Is(err, ErrLEOM) || !w.LEOM() {
		t.Fatalf("Write = %d, %v; want ErrLEOM", n, err)
	}
	if n != 3*PayloadSize {
		t.Fatalf("Write consumed %d bytes, want %d (three blocks)", n, 3*PayloadSize)
	}
	if n2, err := w.Write([]byte("x")); n2 != 0 || !errors.Is(err, ErrLEOM) {
		t.Fatalf("Write after LEOM = %d, %v", n2, err)
	}
	if err := w.Finish(true); err != nil {
		t.Fatalf("Finish after LEOM: %v", err)
	}
	r, err := NewReader(StreamSource(bytes.NewReader(dev.buf.Bytes())), "test")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, data[:n]) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	if !r.Incomplete() {
		t.Fatal("stream not marked incomplete")
	}
}

func TestEndOfMedia(t *testing.T) {
	dev := &memDevice{max: 2}
	w := NewWriter(dev)
	_, err := w.Write(randomData(t, 3*PayloadSize))
	if !errors.Is(err, ErrEndOfMedia) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Write on full media = %v, want ENOSPC", err)
	}
	if err2 := w.Finish(false); !errors.Is(err2, syscall.ENOSPC) {
		t.Fatalf("Finish after ENOSPC = %v", err2)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("error not sticky: %v", err)
	}
}

func TestFinishTwice(t *testing.T) {
	w := NewWriter(&memDevice{})
	if err := w.Finish(false); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(false); !errors.Is(err, ErrFinished) {
		t.Fatalf("second Finish = %v", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrFinished) {
		t.Fatalf("Write after Finish = %v", err)
	}
}

func TestBadStreams(t *testing.T) {
	good := writeStream(t, randomData(t, 2*PayloadSize+100)) // 3 blocks
	mutate := func(f func(b []byte) []byte) []byte {
		return f(bytes.Clone(good))
	}
	tests := []struct {
		name string
		tape []byte
		want error
		open bool // the error comes from NewReader
	}{
		{"empty file", nil, ErrEmptyFile, true},
		{"foreign first block", mutate(func(b []byte) []byte { b[0] ^= 0xff; return b }), ErrForeign, true},
		{"foreign later block", mutate(func(b []byte) []byte { b[Size+3] ^= 1; return b }), ErrForeign, false},
		{"wrong sequence", mutate(func(b []byte) []byte { b[Size+12] = 9; return b }), ErrCorrupt, false},
		{"oversized payload", mutate(func(b []byte) []byte { b[11] = 0xff; return b }), ErrCorrupt, true},
		{"zero payload", mutate(func(b []byte) []byte { b[9], b[10], b[11] = 0, 0, 0; return b }), ErrCorrupt, true},
		{"unknown flag", mutate(func(b []byte) []byte { b[8] = 0x80; return b }), ErrCorrupt, true},
		{"missing end block", good[:2*Size], ErrTruncated, false},
		{"cut inside a block", good[:2*Size+100], ErrTruncated, false},
		{"cut inside first block", good[:100], ErrTruncated, true},
		{"data after end", append(bytes.Clone(good), make([]byte, Size)...), ErrCorrupt, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(StreamSource(bytes.NewReader(tc.tape)), "tape X file 4")
			if tc.open {
				if !errors.Is(err, tc.want) {
					t.Fatalf("NewReader = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewReader: %v", err)
			}
			_, err = io.ReadAll(r)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ReadAll = %v, want %v", err, tc.want)
			}
			if !bytes.Contains([]byte(err.Error()), []byte("tape X file 4")) {
				t.Fatalf("error %q does not name the file", err)
			}
			if _, err2 := r.Read(make([]byte, 10)); err2 == nil {
				t.Fatal("read after error succeeded")
			}
		})
	}
}

func TestSkipToEnd(t *testing.T) {
	data := randomData(t, 2*PayloadSize+5)
	tape := writeStream(t, data)
	r, err := NewReader(StreamSource(bytes.NewReader(tape)), "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	n, err := r.SkipToEnd()
	if err != nil || n != int64(len(data)-10) {
		t.Fatalf("SkipToEnd = %d, %v; want %d", n, err, len(data)-10)
	}
	r, err = NewReader(StreamSource(bytes.NewReader(tape[:Size])), "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.SkipToEnd(); !errors.Is(err, ErrTruncated) {
		t.Fatalf("SkipToEnd on a stream without end block = %v", err)
	}
}

func TestParseHeaderShort(t *testing.T) {
	if _, err := ParseHeader(make([]byte, 5)); !errors.Is(err, ErrTruncated) {
		t.Fatalf("ParseHeader(short) = %v", err)
	}
}
