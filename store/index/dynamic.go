package index

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"sort"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

// Dynamic is a memory-mapped .didx: chunks of any size, each entry
// the exclusive end offset and the digest; found by binary search.
type Dynamic struct {
	path string
	m    *indexMap
	data []byte // m's mapping
	hdr  header
	n    int
	size int64
}

var _ Index = (*Dynamic)(nil)

// OpenDynamic opens and checks a .didx file: entry ends must grow
// strictly and no chunk may exceed the blob limit.
func OpenDynamic(path string) (*Dynamic, error) {
	m, err := mapIndex(path, MagicDynamic)
	if err != nil {
		return nil, err
	}
	x := &Dynamic{path: path, m: m, data: m.data}
	err = m.run(func() error {
		x.hdr = readHeader(x.data)
		return x.check()
	})
	if err != nil {
		m.close()
		return nil, err
	}
	return x, nil
}

func (x *Dynamic) check() error {
	body := len(x.data) - indexHeaderSize
	if body%dynamicEntrySize != 0 {
		return fmt.Errorf("%s: %w: %d entry bytes is not a multiple of %d", x.path, ErrFormat, body, dynamicEntrySize)
	}
	x.n = body / dynamicEntrySize
	var prev int64
	for i := 0; i < x.n; i++ {
		end := x.end(i)
		if end <= prev || end-prev > chunk.MaxBlobSize {
			return fmt.Errorf("%s: %w: entry %d ends at %d after %d", x.path, ErrFormat, i, end, prev)
		}
		prev = end
	}
	x.size = prev
	return nil
}

func (x *Dynamic) end(i int) int64 {
	off := indexHeaderSize + i*dynamicEntrySize
	return int64(binary.LittleEndian.Uint64(x.data[off:]))
}

// Size implements Index.
func (x *Dynamic) Size() int64 { return x.size }

// Len implements Index.
func (x *Dynamic) Len() int { return x.n }

// Csum implements Index.
func (x *Dynamic) Csum() [32]byte { return x.hdr.Csum }

// Path implements Index.
func (x *Dynamic) Path() string { return x.path }

// Err implements Index.
func (x *Dynamic) Err() error { return x.m.err() }

// Chunk implements Index.
func (x *Dynamic) Chunk(i int) (chunk.Digest, int64, int64) {
	if i < 0 || i >= x.n {
		panic(fmt.Sprintf("%s: chunk %d of %d", x.path, i, x.n))
	}
	d, start, end := x.entry(i)
	if x.m.err() != nil {
		return chunk.Digest{}, 0, 0
	}
	return d, start, end
}

// entry reads entry i; a fault leaves Err set.
func (x *Dynamic) entry(i int) (d chunk.Digest, start, end int64) {
	defer x.m.recover(debug.SetPanicOnFault(true))
	off := indexHeaderSize + i*dynamicEntrySize
	if i > 0 {
		start = x.end(i - 1)
	}
	end = x.end(i)
	copy(d[:], x.data[off+8:off+dynamicEntrySize])
	return d, start, end
}

// Find implements Index.
func (x *Dynamic) Find(off int64, hint int) int {
	i := x.find(off, hint)
	if x.m.err() != nil {
		return 0
	}
	return i
}

// find is Find on the mapping; a fault leaves Err set.
func (x *Dynamic) find(off int64, hint int) (found int) {
	defer x.m.recover(debug.SetPanicOnFault(true))
	for _, i := range [2]int{hint, hint + 1} {
		if i >= 0 && i < x.n && off < x.end(i) && (i == 0 || off >= x.end(i-1)) {
			return i
		}
	}
	return sort.Search(x.n, func(i int) bool { return x.end(i) > off })
}

// ComputeCsum recomputes the checksum over the entries.
// A fault reading the file leaves Err set.
func (x *Dynamic) ComputeCsum() [32]byte { return x.m.sum(indexHeaderSize) }

// Close unmaps the file.
func (x *Dynamic) Close() error {
	x.data = nil
	return x.m.close()
}

// DynamicWriter writes a .didx: entries are added in order; Close writes
// the header and renames the file into place.
type DynamicWriter struct {
	x   *indexFile
	end int64
	hdr []byte
	buf [dynamicEntrySize]byte
}

// NewDynamicWriter starts an index at path.
func NewDynamicWriter(path string) (*DynamicWriter, error) {
	x, err := createIndexFile(path)
	if err != nil {
		return nil, err
	}
	var uuid [16]byte
	rand.Read(uuid[:])
	return &DynamicWriter{x: x, hdr: newHeader(MagicDynamic, uuid, time.Now().Unix())}, nil
}

// Add appends a chunk of size bytes.
func (w *DynamicWriter) Add(d chunk.Digest, size int) error {
	if size <= 0 {
		return fmt.Errorf("dynamic index %s: empty chunk", w.x.path)
	}
	w.end += int64(size)
	binary.LittleEndian.PutUint64(w.buf[:8], uint64(w.end))
	copy(w.buf[8:], d[:])
	w.x.entry(w.buf[:])
	return nil
}

// Size is the data size so far.
func (w *DynamicWriter) Size() int64 { return w.end }

// Close finishes the index and returns its checksum and data size.
func (w *DynamicWriter) Close() (csum [32]byte, size int64, err error) {
	csum, err = w.x.finish(w.hdr)
	return csum, w.end, err
}

// Abort removes the unfinished index.
func (w *DynamicWriter) Abort() { w.x.abort() }
