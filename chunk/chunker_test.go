package chunk

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// pbsTestData is the input of PBS's test_chunker1: the little-endian
// bytes of 0, 1, 2, … as u32, 1 MiB in all.
func pbsTestData() []byte {
	b := make([]byte, 0, 1<<20)
	for i := 0; i < 256*1024; i++ {
		for j := 0; j < 4; j++ {
			b = append(b, byte(i>>(j*8)))
		}
	}
	return b
}

// randomData is deterministic pseudo-random bytes.
func randomData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for k := 0; k < 8; k++ {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	return b
}

// cuts returns the chunk lengths of data fed in pieces of step bytes
// (step <= 0: all at once).
func cuts(c Chunker, data []byte, step int) []int {
	var out []int
	cur := 0
	for pos := 0; pos < len(data); {
		end := len(data)
		if step > 0 {
			end = min(pos+step, len(data))
		}
		piece := data[pos:end]
		n := c.Scan(piece)
		if n == 0 {
			cur += len(piece)
			pos = end
			continue
		}
		out = append(out, cur+n)
		cur = 0
		pos += n
	}
	if cur > 0 {
		out = append(out, cur)
	}
	return out
}

// TestBuzhashVectors pins cut points against committed vectors. The
// vectors were computed by this chunker and cross-checked by hand against
// PBS's algorithm (chunker.rs); regenerate only on purpose with
// CAIRN_UPDATE_VECTORS=1.
func TestBuzhashVectors(t *testing.T) {
	cases := []struct {
		file string
		avg  int
		data []byte
	}{
		{"buzhash-pbs-test-64k.txt", 64 << 10, pbsTestData()},
		{"buzhash-random-64k.txt", 64 << 10, randomData(4<<20, 1)},
		{"buzhash-random-256k.txt", 256 << 10, randomData(8<<20, 2)},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			c, err := NewBuzhash(tc.avg)
			if err != nil {
				t.Fatal(err)
			}
			got := cuts(c, tc.data, 0)
			path := "testdata/" + tc.file
			if os.Getenv("CAIRN_UPDATE_VECTORS") == "1" {
				writeVector(t, path, got)
			}
			want := readVector(t, path)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("cut lengths differ from %s:\n got %v\nwant %v", path, got, want)
			}
		})
	}
}

func writeVector(t *testing.T, path string, v []int) {
	var b strings.Builder
	for _, n := range v {
		fmt.Fprintln(&b, n)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readVector(t *testing.T, path string) []int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, n)
	}
	return out
}

// TestBuzhashPBSBoundary ties our cut points to PBS's own: its
// test_suggested_boundary (chunker.rs) names 405521 as a "regular
// boundary" of the test_chunker1 input at avg 64 KiB, which it is only if
// the chunker cuts exactly where PBS's does.
func TestBuzhashPBSBoundary(t *testing.T) {
	end := 0
	for _, n := range cuts(newBuzhash(64<<10), pbsTestData(), 0) {
		end += n
		if end == 405521 {
			return
		}
	}
	t.Fatal("no cut at 405521, the regular boundary PBS's tests name")
}

// TestBuzhashPieceInvariance is PBS's test_chunker1 and more: feeding one
// byte at a time, or in odd pieces, cuts where the whole buffer does.
func TestBuzhashPieceInvariance(t *testing.T) {
	for _, data := range [][]byte{pbsTestData(), randomData(2<<20, 3)} {
		whole := cuts(newBuzhash(64<<10), data, 0)
		for _, step := range []int{1, 7, 63, 64, 65, 4096, 100003} {
			got := cuts(newBuzhash(64<<10), data, step)
			if fmt.Sprint(got) != fmt.Sprint(whole) {
				t.Fatalf("step %d: cuts %v, whole buffer %v", step, got, whole)
			}
		}
	}
}

// TestBuzhashBounds checks min and max chunk sizes on random and constant
// input (constant input never matches the boundary test, so it cuts at max).
func TestBuzhashBounds(t *testing.T) {
	avg := 64 << 10
	for name, data := range map[string][]byte{"random": randomData(8<<20, 4), "zeros": make([]byte, 3<<20)} {
		lens := cuts(newBuzhash(avg), data, 0)
		for i, n := range lens {
			last := i == len(lens)-1
			if n > 4*avg || (!last && n < avg/4) {
				t.Fatalf("%s: chunk %d has %d bytes, want %d..%d", name, i, n, avg/4, 4*avg)
			}
		}
		if name == "zeros" && lens[0] != 4*avg {
			t.Fatalf("zeros: first chunk %d, want max %d", lens[0], 4*avg)
		}
	}
}

func TestCheckChunkSize(t *testing.T) {
	for _, tc := range []struct {
		size int
		ok   bool
	}{{64 << 10, true}, {4 << 20, true}, {16 << 20, true}, {32 << 10, false}, {32 << 20, false}, {3 << 20, false}, {0, false}} {
		err := CheckChunkSize(tc.size)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrChunkSize)) {
			t.Errorf("CheckChunkSize(%d) = %v", tc.size, err)
		}
	}
}

func TestFixedChunker(t *testing.T) {
	c, err := NewFixed(64 << 10)
	if err != nil {
		t.Fatal(err)
	}
	data := randomData(200<<10+5, 5)
	for _, step := range []int{0, 1000, 1} {
		c.Reset()
		got := cuts(c, data, step)
		want := []int{64 << 10, 64 << 10, 64 << 10, 8<<10 + 5}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d: %v, want %v", step, got, want)
		}
	}
}

// TestReaderMatchesScan checks that Reader gives the same chunks for every
// buffer size and for a source that returns one byte per read.
func TestReaderMatchesScan(t *testing.T) {
	data := randomData(3<<20+17, 6)
	want := cuts(newBuzhash(64<<10), data, 0)
	srcs := map[string]func() io.Reader{
		"plain":   func() io.Reader { return bytes.NewReader(data) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
		"half":    func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
	}
	for name, src := range srcs {
		for _, bs := range []int{8 << 10, 100_000, 4 << 20, 16 << 20} {
			if name == "onebyte" && bs > 8<<10 {
				continue
			}
			r := NewReader(src(), newBuzhash(64<<10), bs)
			var got []int
			var joined []byte
			var buf []byte
			for {
				var err error
				buf, err = r.Next(buf)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, len(buf))
				joined = append(joined, buf...)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || !bytes.Equal(joined, data) {
				t.Fatalf("%s buffer %d: chunks %v, want %v", name, bs, got, want)
			}
		}
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(iotest.ErrReader(boom), newBuzhash(64<<10), 0)
	if _, err := r.Next(nil); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
}

// TestReaderEach: Each gives every chunk at its offset with the totals,
// and stops at fn's error or the source's.
func TestReaderEach(t *testing.T) {
	data := randomData(2<<20+5, 8)
	want := cuts(newBuzhash(64<<10), data, 0)
	var got []int
	var joined []byte
	total, count, err := NewReader(bytes.NewReader(data), newBuzhash(64<<10), 100_000).Each(func(off int64, b []byte) error {
		if off != int64(len(joined)) {
			t.Fatalf("chunk %d at offset %d, want %d", len(got), off, len(joined))
		}
		got, joined = append(got, len(b)), append(joined, b...)
		return nil
	})
	if err != nil || total != int64(len(data)) || count != int64(len(want)) ||
		fmt.Sprint(got) != fmt.Sprint(want) || !bytes.Equal(joined, data) {
		t.Fatalf("Each: %d bytes, %d chunks, %v; chunks %v, want %v", total, count, err, got, want)
	}
	stop := errors.New("stop")
	_, count, err = NewReader(bytes.NewReader(data), newBuzhash(64<<10), 0).Each(func(int64, []byte) error { return stop })
	if !errors.Is(err, stop) || count != 0 {
		t.Fatalf("fn's error: %d chunks, %v", count, err)
	}
	boom := errors.New("boom")
	src := io.MultiReader(bytes.NewReader(data[:1000]), iotest.ErrReader(boom))
	if _, _, err := NewReader(src, newBuzhash(64<<10), 0).Each(func(int64, []byte) error { return nil }); !errors.Is(err, boom) {
		t.Fatalf("read error: %v", err)
	}
}

func BenchmarkBuzhash(b *testing.B) {
	data := randomData(16<<20, 7)
	b.SetBytes(int64(len(data)))
	c := newBuzhash(4 << 20)
	for b.Loop() {
		c.Reset()
		cuts(c, data, 0)
	}
}

func BenchmarkIsZero(b *testing.B) {
	data := make([]byte, 4<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if !IsZero(data) {
			b.Fatal("not zero")
		}
	}
}
