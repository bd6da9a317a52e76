package index

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/chunk"
)

// Every truncation of a small fixed index fails; every truncation of a
// dynamic index fails, except at an entry boundary, where it is a
// shorter index whose checksum no longer matches its header.
func TestIndexTruncatedEverywhere(t *testing.T) {
	dir := ramDir(t) // a file written per length: on a tmpfs, no disk writeback
	for _, fixed := range []bool{true, false} {
		var data []byte
		if fixed {
			data = writeTestIndex(t, filepath.Join(dir, "src.img.fidx"), true)
		} else {
			data = writeTestIndex(t, filepath.Join(dir, "src.didx"), false)
		}
		name := map[bool]string{true: "cut.img.fidx", false: "cut.didx"}[fixed]
		path := filepath.Join(dir, name)
		for n := 0; n < len(data); n++ {
			if err := os.WriteFile(path, data[:n], 0o644); err != nil {
				t.Fatal(err)
			}
			x, err := Open(path)
			if err != nil {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("%s cut to %d bytes: %v", name, n, err)
				}
				continue
			}
			boundary := !fixed && n >= indexHeaderSize && (n-indexHeaderSize)%dynamicEntrySize == 0
			if !boundary || x.(*Dynamic).ComputeCsum() == x.Csum() {
				t.Fatalf("%s cut to %d bytes opens with %d chunks and a matching checksum", name, n, x.Len())
			}
			x.Close()
		}
	}
}

// ramDir is a temporary directory on RAM when there is one.
func ramDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "cairn-index-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// writeTestIndex writes an index of chunks of the given sizes (default
// 64 KiB, 64 KiB, 100 bytes) with the real writer and returns its bytes.
func writeTestIndex(t testing.TB, path string, fixed bool, sizes ...int) []byte {
	t.Helper()
	var add func(chunk.Digest, int) error
	var finish func() ([32]byte, int64, error)
	if fixed {
		w, err := NewFixedWriter(path, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		add, finish = w.Add, w.Close
	} else {
		w, err := NewDynamicWriter(path)
		if err != nil {
			t.Fatal(err)
		}
		add, finish = w.Add, w.Close
	}
	if sizes == nil {
		sizes = []int{64 << 10, 64 << 10, 100}
	}
	for i, size := range sizes {
		if err := add(chunk.Sum([]byte{byte(i)}), size); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := finish(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Sizes in an index header or entries that claim more than the file
// holds, or huge counts, fail naming the file.
func TestIndexHugeClaims(t *testing.T) {
	dir := t.TempDir()
	fixed := writeTestIndex(t, filepath.Join(dir, "a.img.fidx"), true)
	dyn := writeTestIndex(t, filepath.Join(dir, "a.didx"), false)
	put := func(b []byte, off int, v uint64) []byte {
		b = append([]byte{}, b...)
		binary.LittleEndian.PutUint64(b[off:], v)
		return b
	}
	cases := map[string][]byte{
		"size 2^62.img.fidx":            put(fixed, offSize, 1<<62),
		"size 2^64-1.img.fidx":          put(fixed, offSize, 1<<64-1),
		"size one chunk more.img.fidx":  put(fixed, offSize, 3*64<<10+1),
		"chunk size 2^40.img.fidx":      put(fixed, offChunkSize, 1<<40),
		"chunk size 2^63.img.fidx":      put(fixed, offChunkSize, 1<<63),
		"end 2^62.didx":                 put(dyn, indexHeaderSize+2*dynamicEntrySize, 1<<62),
		"end 2^64-1.didx":               put(dyn, indexHeaderSize, 1<<64-1),
		"chunk over 128 MiB.didx":       put(dyn, indexHeaderSize+2*dynamicEntrySize, 2*64<<10+chunk.MaxBlobSize+1),
		"first chunk over 128 MiB.didx": put(dyn, indexHeaderSize, chunk.MaxBlobSize+1),
	}
	for name, data := range cases {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		x, err := Open(path)
		if err == nil {
			x.Close()
			t.Errorf("%s: opened", name)
			continue
		}
		if !errors.Is(err, ErrFormat) || !contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
