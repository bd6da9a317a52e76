package index

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/chunk"
)

// fuzzIndex opens data as an index file named name and checks that the
// chunks it lists tile [0, Size) and that Find agrees with them.
func fuzzIndex(t *testing.T, name string, data []byte) {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := Open(path)
	if err != nil {
		if !errors.Is(err, ErrFormat) || !bytes.Contains([]byte(err.Error()), []byte(path)) {
			t.Fatalf("error %v: not ErrFormat naming the file", err)
		}
		return
	}
	defer x.Close()
	if int64(x.Len())*32 > int64(len(data)) {
		t.Fatalf("%d chunks in a %d-byte file", x.Len(), len(data))
	}
	var prev int64
	for i := range x.Len() {
		_, start, end := x.Chunk(i)
		if start != prev || end <= start || end-start > chunk.MaxBlobSize || end > x.Size() {
			t.Fatalf("chunk %d: [%d, %d) after %d, size %d", i, start, end, prev, x.Size())
		}
		if x.Find(start, 0) != i || x.Find(end-1, i) != i {
			t.Fatalf("Find disagrees with chunk %d", i)
		}
		prev = end
	}
	if prev != x.Size() {
		t.Fatalf("chunks end at %d, size %d", prev, x.Size())
	}
}

// FuzzFixedIndex opens arbitrary .fidx files.
func FuzzFixedIndex(f *testing.F) {
	dir := f.TempDir()
	f.Add(writeTestIndex(f, filepath.Join(dir, "0.img.fidx"), true, []int{}...))
	f.Add(writeTestIndex(f, filepath.Join(dir, "3.img.fidx"), true, 64<<10, 64<<10, 1000))
	f.Add(writeTestIndex(f, filepath.Join(dir, "1.img.fidx"), true, 64<<10))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzIndex(t, "f.img.fidx", data) })
}

// FuzzDynamicIndex opens arbitrary .didx files.
func FuzzDynamicIndex(f *testing.F) {
	dir := f.TempDir()
	f.Add(writeTestIndex(f, filepath.Join(dir, "0.didx"), false, []int{}...))
	f.Add(writeTestIndex(f, filepath.Join(dir, "3.didx"), false, 10, 20, 4<<20))
	f.Add(writeTestIndex(f, filepath.Join(dir, "1.didx"), false, 1))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzIndex(t, "d.didx", data) })
}
