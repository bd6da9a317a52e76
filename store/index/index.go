package index

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnfs/cairn/chunk"
)

// ErrFormat is returned for an index file that is not a valid index (or
// not the one a manifest lists): it names the file and what is wrong.
var ErrFormat = errors.New("bad index file")

// Index file magics and layout (PBS file_formats.rs).
var (
	MagicFixed   = [8]byte{47, 127, 65, 237, 145, 253, 15, 205}
	MagicDynamic = [8]byte{28, 145, 78, 165, 25, 186, 179, 205}
)

const (
	indexHeaderSize  = 4096
	fixedEntrySize   = chunk.DigestSize
	dynamicEntrySize = 8 + chunk.DigestSize
	offUUID          = 8
	offCtime         = 24
	offCsum          = 32
	offSize          = 64
	offChunkSize     = 72
)

// Index is a read view of a fixed or dynamic index: a list of chunks that
// together make an archive's data.
type Index interface {
	// Size is the archive's data size in bytes.
	Size() int64
	// Len is the number of chunks.
	Len() int
	// Chunk returns chunk i's digest and its [start, end) data range.
	Chunk(i int) (d chunk.Digest, start, end int64)
	// Find returns the chunk that holds offset off (0 <= off < Size),
	// trying hint (the chunk of the previous read) and its successor first.
	Find(off int64, hint int) int
	// Csum is the index checksum recorded in the header.
	Csum() [32]byte
	// Path is the index file's path, for messages.
	Path() string
	// Err is set (wrapping ErrFault) once the index file could not
	// be read: it shrank or failed while open. Chunk then returns the
	// zero digest and an empty range, Find 0: callers check Err before
	// they trust an entry or when a read comes out wrong.
	Err() error
	Close() error
}

// Kind tells a fixed from a dynamic index by file name.
func Kind(name string) (fixed, ok bool) {
	switch {
	case strings.HasSuffix(name, ".fidx"):
		return true, true
	case strings.HasSuffix(name, ".didx"):
		return false, true
	}
	return false, false
}

// Open opens a .fidx or .didx file.
func Open(path string) (Index, error) {
	fixed, ok := Kind(path)
	if !ok {
		return nil, fmt.Errorf("%s: %w: name ends neither in .fidx nor .didx", path, ErrFormat)
	}
	if fixed {
		return OpenFixed(path)
	}
	return OpenDynamic(path)
}

// header is the common part of both index headers.
type header struct {
	UUID  [16]byte
	Ctime int64
	Csum  [32]byte
}

func readHeader(b []byte) header {
	var h header
	copy(h.UUID[:], b[offUUID:])
	h.Ctime = int64(binary.LittleEndian.Uint64(b[offCtime:]))
	copy(h.Csum[:], b[offCsum:])
	return h
}

// indexFile is the temp-file-and-rename writer shared by both index
// writers: header placeholder, entries streamed, header patched at Close.
type indexFile struct {
	path string
	f    *os.File
	w    *bufWriter
	sum  hashWriter
	n    int
}

type hashWriter interface {
	Write([]byte) (int, error)
	Sum([]byte) []byte
}

func createIndexFile(path string) (*indexFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp_")
	if err != nil {
		return nil, fmt.Errorf("create index %s: %w", path, err)
	}
	w := newBufWriter(f, 256<<10)
	w.Write(make([]byte, indexHeaderSize))
	return &indexFile{path: path, f: f, w: w, sum: sha256.New()}, nil
}

func (x *indexFile) entry(b []byte) {
	x.sum.Write(b)
	x.w.Write(b)
	x.n++
}

// finish writes the header and renames the file into place.
func (x *indexFile) finish(hdr []byte) ([32]byte, error) {
	var csum [32]byte
	copy(csum[:], x.sum.Sum(nil))
	copy(hdr[offCsum:], csum[:])
	err := x.w.Flush()
	if err == nil {
		_, err = x.f.WriteAt(hdr, 0)
	}
	if err == nil {
		err = x.f.Sync()
	}
	if cerr := x.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(x.f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(x.f.Name(), x.path)
	}
	if err != nil {
		os.Remove(x.f.Name())
		return csum, fmt.Errorf("write index %s: %w", x.path, err)
	}
	return csum, nil
}

// abort drops an unfinished index.
func (x *indexFile) abort() {
	x.f.Close()
	os.Remove(x.f.Name())
}

func newHeader(magic [8]byte, uuid [16]byte, ctime int64) []byte {
	hdr := make([]byte, indexHeaderSize)
	copy(hdr, magic[:])
	copy(hdr[offUUID:], uuid[:])
	binary.LittleEndian.PutUint64(hdr[offCtime:], uint64(ctime))
	return hdr
}

// bufWriter is a bufio.Writer that remembers its first error.
type bufWriter struct {
	f   *os.File
	buf []byte
	err error
}

func newBufWriter(f *os.File, size int) *bufWriter {
	return &bufWriter{f: f, buf: make([]byte, 0, size)}
}

func (w *bufWriter) Write(p []byte) (int, error) {
	if len(w.buf)+len(p) > cap(w.buf) {
		w.Flush()
	}
	w.buf = append(w.buf, p...)
	return len(p), w.err
}

func (w *bufWriter) Flush() error {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.f.Write(w.buf)
	}
	w.buf = w.buf[:0]
	return w.err
}
