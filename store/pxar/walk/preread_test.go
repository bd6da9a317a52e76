package walk

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/store/storetest"
	"golang.org/x/sys/unix"
)

// preread reads a file whole into a buffer of its class, and gives up
// on a file shorter than its size said; a prereadReader then serves
// Read and ReadAt from the buffer and, for a file that grew, the rest
// from the file.
func TestPreread(t *testing.T) {
	content := storetest.RandSeeded(70_000, 3)
	path := filepath.Join(t.TempDir(), "f")
	must(t, os.WriteFile(path, content, 0o644))
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	must(t, err)
	defer unix.Close(fd)
	for size, class := range map[int64]int{1: 0, 4096: 0, 4097: 1, 65536: 4, 65537: 5, 131072: 5} {
		if c := prereadClass(size); c != class {
			t.Errorf("class of %d: %d, want %d", size, c, class)
		}
	}
	if b := preread(fd, 80_000); b != nil {
		t.Fatalf("a file shorter than its size: read %d bytes", len(b))
	}
	data := preread(fd, 50_000) // the file grew by 20,000 bytes since
	if !bytes.Equal(data, content[:50_000]) || cap(data) != 64<<10 {
		t.Fatalf("preread: %d bytes (cap %d), content equal %v", len(data), cap(data), bytes.Equal(data, content[:50_000]))
	}
	r := &prereadReader{fdReader: fdReader{fd: fd, path: path}, data: data}
	got, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("Read: %d bytes, %v", len(got), err)
	}
	for _, c := range []struct{ off, n int }{{0, 100}, {49_990, 20}, {50_000, 10}, {69_990, 10}} {
		p := make([]byte, c.n)
		if k, err := r.ReadAt(p, int64(c.off)); k != c.n || err != nil || !bytes.Equal(p, content[c.off:c.off+c.n]) {
			t.Errorf("ReadAt(%d, %d): %d, %v", c.off, c.n, k, err)
		}
	}
	if k, err := r.ReadAt(make([]byte, 20), 69_990); k != 10 || err != io.EOF {
		t.Errorf("ReadAt past the end: %d, %v", k, err)
	}
	if _, err := r.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at a negative offset succeeded")
	}
	releasePreread(data)
	releasePreread(make([]byte, 3000)) // not a pool's buffer: dropped
	if b := preread(fd, 40_000); !bytes.Equal(b, content[:40_000]) {
		t.Error("a recycled buffer read wrong")
	}
}
