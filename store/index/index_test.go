package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/chunk"
)

func TestFixedIndexRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "disk.img.fidx")
	w, err := NewFixedWriter(path, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	var ds []chunk.Digest
	for i := 0; i < 5; i++ {
		d := chunk.Sum([]byte{byte(i)})
		ds = append(ds, d)
		size := 64 << 10
		if i == 4 {
			size = 1000
		}
		if err := w.Add(d, size); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Add(ds[0], 10); err == nil {
		t.Fatal("a chunk after a short one was accepted")
	}
	csum, size, err := w.Close()
	if err != nil || size != 4*64<<10+1000 {
		t.Fatalf("close: size %d err %v", size, err)
	}
	x, err := OpenFixed(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Len() != 5 || x.Size() != size || x.Csum() != csum || x.ComputeCsum() != csum {
		t.Fatalf("len %d size %d csum ok %v", x.Len(), x.Size(), x.Csum() == csum)
	}
	for i, want := range ds {
		d, start, end := x.Chunk(i)
		if d != want || start != int64(i)*64<<10 || (i < 4 && end != start+64<<10) || (i == 4 && end != size) {
			t.Errorf("chunk %d: %x %d %d", i, d[:4], start, end)
		}
		if x.Find(start, 0) != i || x.Find(end-1, 0) != i {
			t.Errorf("find chunk %d", i)
		}
	}
	if fi, _ := os.Stat(path); fi.Size() != 4096+5*32 {
		t.Errorf("file size %d", fi.Size())
	}
}

func TestDynamicIndexRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "root.mpxar.didx")
	w, err := NewDynamicWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{100, 5000, 1, 70000, 3}
	var ends []int64
	var end int64
	for i, n := range sizes {
		w.Add(chunk.Sum([]byte{byte(i)}), n)
		end += int64(n)
		ends = append(ends, end)
	}
	csum, size, err := w.Close()
	if err != nil || size != end {
		t.Fatal(size, err)
	}
	x, err := OpenDynamic(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Len() != len(sizes) || x.Size() != end || x.Csum() != csum || x.ComputeCsum() != csum {
		t.Fatal("header mismatch")
	}
	// Every offset maps to the right chunk, with and without hints.
	for off := int64(0); off < end; off += 97 {
		want := 0
		for ends[want] <= off {
			want++
		}
		for _, hint := range []int{0, want - 1, want, 3, -1, 99} {
			if got := x.Find(off, hint); got != want {
				t.Fatalf("Find(%d, hint %d) = %d, want %d", off, hint, got, want)
			}
		}
	}
}

// TestIndexBadInput covers every way an index file can be wrong.
func TestIndexBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.img.fidx")
	w, _ := NewFixedWriter(good, 64<<10)
	w.Add(chunk.Sum(nil), 64<<10)
	w.Add(chunk.Sum(nil), 64<<10)
	w.Close()
	gd := filepath.Join(dir, "good.didx")
	dw, _ := NewDynamicWriter(gd)
	dw.Add(chunk.Sum(nil), 10)
	dw.Add(chunk.Sum(nil), 20)
	dw.Close()
	fixed, _ := os.ReadFile(good)
	dyn, _ := os.ReadFile(gd)

	mutate := func(b []byte, f func([]byte) []byte) []byte { return f(append([]byte{}, b...)) }
	cases := []struct {
		name string
		data []byte
	}{
		{"empty.fidx", nil},
		{"short-header.fidx", fixed[:100]},
		{"wrong-magic.fidx", mutate(fixed, func(b []byte) []byte { b[0] ^= 1; return b })},
		{"didx-magic.fidx", dyn},
		{"truncated-entries.fidx", fixed[:len(fixed)-1]},
		{"extra-entries.fidx", append(append([]byte{}, fixed...), make([]byte, 32)...)},
		{"size-too-big.fidx", mutate(fixed, func(b []byte) []byte { binary.LittleEndian.PutUint64(b[offSize:], 1<<40); return b })},
		{"chunk-size-3.fidx", mutate(fixed, func(b []byte) []byte { binary.LittleEndian.PutUint64(b[offChunkSize:], 3<<16); return b })},
		{"chunk-size-0.fidx", mutate(fixed, func(b []byte) []byte { binary.LittleEndian.PutUint64(b[offChunkSize:], 0); return b })},
		{"partial-entry.didx", dyn[:len(dyn)-5]},
		{"decreasing.didx", mutate(dyn, func(b []byte) []byte { binary.LittleEndian.PutUint64(b[4096+40:], 5); return b })},
		{"zero-length.didx", mutate(dyn, func(b []byte) []byte { binary.LittleEndian.PutUint64(b[4096+40:], 10); return b })},
		{"fidx-magic.didx", fixed},
		{"no-suffix", fixed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			os.WriteFile(path, tc.data, 0o644)
			x, err := Open(path)
			if err == nil {
				x.Close()
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not match ErrFormat", err)
			}
			if !contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
	if _, err := Open(filepath.Join(dir, "missing.fidx")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}

func BenchmarkDynamicFindSequential(b *testing.B) {
	path := filepath.Join(b.TempDir(), "x.didx")
	w, _ := NewDynamicWriter(path)
	for i := 0; i < 100000; i++ {
		w.Add(chunk.Digest{}, 4096+i%7)
	}
	w.Close()
	x, _ := OpenDynamic(path)
	defer x.Close()
	hint := 0
	for b.Loop() {
		for off := int64(0); off < x.Size(); off += 4096 {
			hint = x.Find(off, hint)
		}
	}
}

// Copy writes an index byte for byte and returns the checksum of its
// header and of its entries as copied; an index of a type Open does not
// make is refused.
func TestCopy(t *testing.T) {
	dir := t.TempDir()
	for _, fixed := range []bool{true, false} {
		path := filepath.Join(dir, map[bool]string{true: "a.img.fidx", false: "a.didx"}[fixed])
		data := writeTestIndex(t, path, fixed)
		x, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		hdr, entries, err := Copy(&buf, x)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) || hdr != x.Csum() || entries != x.Csum() {
			t.Errorf("%s: copy of %d bytes (file %d), header sum ok %v, entries sum ok %v",
				path, buf.Len(), len(data), hdr == x.Csum(), entries == x.Csum())
		}
		// Entries changed behind the header show as the two sums differing.
		data[len(data)-1] ^= 1
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if hdr, entries, err = Copy(io.Discard, x); err != nil || hdr == entries {
			t.Errorf("%s changed: header sum == entries sum %v, err %v", path, hdr == entries, err)
		}
		x.Close()
	}
	if _, _, err := Copy(io.Discard, otherIndex{}); !errors.Is(err, ErrFormat) {
		t.Errorf("copy of another index type: %v", err)
	}
}

// otherIndex is an Index this package did not open.
type otherIndex struct{ Index }

func (otherIndex) Path() string { return "other" }
