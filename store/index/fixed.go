package index

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math/bits"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

// Fixed is a memory-mapped .fidx: equal-sized chunks (the last may
// be short), found by division.
type Fixed struct {
	path      string
	m         *indexMap
	data      []byte // m's mapping
	hdr       header
	size      int64
	chunkSize int64
	n         int
}

var _ Index = (*Fixed)(nil)

// OpenFixed opens and checks a .fidx file.
func OpenFixed(path string) (*Fixed, error) {
	m, err := mapIndex(path, MagicFixed)
	if err != nil {
		return nil, err
	}
	data := m.data
	x := &Fixed{path: path, m: m, data: data}
	err = m.run(func() error {
		x.hdr = readHeader(data)
		x.size = int64(binary.LittleEndian.Uint64(data[offSize:]))
		x.chunkSize = int64(binary.LittleEndian.Uint64(data[offChunkSize:]))
		return x.check()
	})
	if err != nil {
		m.close()
		return nil, err
	}
	return x, nil
}

func (x *Fixed) check() error {
	cs := x.chunkSize
	if cs <= 0 || cs > chunk.MaxBlobSize || bits.OnesCount64(uint64(cs)) != 1 {
		return fmt.Errorf("%s: %w: chunk size %d is not a power of two up to 128 MiB", x.path, ErrFormat, cs)
	}
	if x.size < 0 || x.size > 1<<60 {
		return fmt.Errorf("%s: %w: image size %d", x.path, ErrFormat, x.size)
	}
	n := (x.size + cs - 1) / cs
	want := indexHeaderSize + n*fixedEntrySize
	if int64(len(x.data)) != want {
		return fmt.Errorf("%s: %w: file is %d bytes, header (size %d, chunk size %d) needs %d",
			x.path, ErrFormat, len(x.data), x.size, cs, want)
	}
	x.n = int(n)
	return nil
}

// Size implements Index.
func (x *Fixed) Size() int64 { return x.size }

// ChunkSize is the index's fixed chunk size.
func (x *Fixed) ChunkSize() int64 { return x.chunkSize }

// Len implements Index.
func (x *Fixed) Len() int { return x.n }

// Csum implements Index.
func (x *Fixed) Csum() [32]byte { return x.hdr.Csum }

// Path implements Index.
func (x *Fixed) Path() string { return x.path }

// Err implements Index.
func (x *Fixed) Err() error { return x.m.err() }

// Chunk implements Index.
func (x *Fixed) Chunk(i int) (d chunk.Digest, start, end int64) {
	if i < 0 || i >= x.n {
		panic(fmt.Sprintf("%s: chunk %d of %d", x.path, i, x.n))
	}
	start = int64(i) * x.chunkSize
	if x.m.read(d[:], indexHeaderSize+i*fixedEntrySize); x.m.err() != nil {
		return chunk.Digest{}, start, start
	}
	return d, start, min(start+x.chunkSize, x.size)
}

// Find implements Index.
func (x *Fixed) Find(off int64, _ int) int { return int(off / x.chunkSize) }

// ComputeCsum recomputes the checksum over the entries.
// A fault reading the file leaves Err set.
func (x *Fixed) ComputeCsum() [32]byte { return x.m.sum(indexHeaderSize) }

// Close unmaps the file.
func (x *Fixed) Close() error {
	x.data = nil
	return x.m.close()
}

// FixedWriter writes a .fidx: digests are added in order; Close patches
// the header (size, checksum) and renames the file into place.
type FixedWriter struct {
	x         *indexFile
	chunkSize int64
	size      int64
	hdr       []byte
}

// NewFixedWriter starts an index at path with the given chunk size.
func NewFixedWriter(path string, chunkSize int) (*FixedWriter, error) {
	if err := chunk.CheckChunkSize(chunkSize); err != nil {
		return nil, fmt.Errorf("fixed index %s: %w", path, err)
	}
	x, err := createIndexFile(path)
	if err != nil {
		return nil, err
	}
	var uuid [16]byte
	rand.Read(uuid[:])
	return &FixedWriter{x: x, chunkSize: int64(chunkSize),
		hdr: newHeader(MagicFixed, uuid, time.Now().Unix())}, nil
}

// Add appends the next chunk of size bytes; only the last may be short.
func (w *FixedWriter) Add(d chunk.Digest, size int) error {
	if w.size%w.chunkSize != 0 {
		return fmt.Errorf("fixed index %s: chunk after a short chunk", w.x.path)
	}
	w.x.entry(d[:])
	w.size += int64(size)
	return nil
}

// Close finishes the index and returns its checksum and data size.
func (w *FixedWriter) Close() (csum [32]byte, size int64, err error) {
	binary.LittleEndian.PutUint64(w.hdr[offSize:], uint64(w.size))
	binary.LittleEndian.PutUint64(w.hdr[offChunkSize:], uint64(w.chunkSize))
	csum, err = w.x.finish(w.hdr)
	return csum, w.size, err
}

// Abort removes the unfinished index.
func (w *FixedWriter) Abort() { w.x.abort() }
