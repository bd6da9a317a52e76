package store

import (
	"context"
	"errors"
	"fmt"
	"path"
	"runtime"
	"runtime/debug"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// Backend is where a store's chunks and snapshot files live, the seam
// between keeping them and doing something with them: the local
// directory (localDir) is the first implementation; an object store may
// be another. *Store is a Backend over its own directory.
//
// Index files are not behind it yet: they are mapped by path (OpenIndex).
// Nor are snapshot directories' listing and locks.
type Backend interface {
	ChunkReader
	// InsertChunkParts stores the blob header+payload as chunk d. An
	// existing chunk of the same size is kept and only touched (dedup);
	// one of another size, or empty, is replaced. existed tells whether
	// the chunk was already there.
	InsertChunkParts(d chunk.Digest, header, payload []byte) (existed bool, err error)
	// HasChunk reports whether chunk d exists with a non-zero size.
	HasChunk(d chunk.Digest) bool
	// TouchChunk marks chunk d as in use now (GC's mark).
	TouchChunk(d chunk.Digest) error
	// WalkChunks calls fn for every chunk, in the backend's order.
	WalkChunks(ctx context.Context, fn func(chunk.Digest) error) error
	// ReadFile reads a whole snapshot file (a manifest, a blob), named
	// relative to the store (snapshotFile), of at most limit bytes. A
	// missing file's error wraps fs.ErrNotExist; a larger one is
	// refused, with an *errTooLarge, before it is read.
	ReadFile(name string, limit int64) ([]byte, error)
}

// snapshotFile names a snapshot's file relative to the store.
func snapshotFile(snap Snapshot, name string) string {
	return path.Join(snap.NS.rel(), snap.Type, snap.ID, snap.TimeString(), name)
}

// ChunkReader is the one way to read a chunk: what the chunk cache and
// restores need of a Backend.
type ChunkReader interface {
	// ReadChunk reads chunk d's raw DataBlob. A missing chunk is
	// ErrMissingChunk (and fs.ErrNotExist); a chunk file that is not a
	// regular file, or larger than a blob may be, is ErrCorruptChunk.
	ReadChunk(ctx context.Context, d chunk.Digest, opt ChunkOptions) (Blob, error)
}

// ChunkOptions say how ReadChunk may read a chunk. The zero value reads
// into a new buffer, O_DIRECT when the page cache does not hold the file.
type ChunkOptions struct {
	// Buf is reused for the blob when it is read (grown as needed): pass
	// back Blob.Bytes of the last read, so a worker that reads many
	// chunks keeps one buffer (the blob may start inside Buf, where
	// O_DIRECT wants it aligned).
	Buf []byte
	// Direct says when to bypass the page cache.
	Direct Direct
	// Map allows a chunk file the page cache holds whole to be mapped
	// instead of copied; the blob is then valid until Release.
	Map Map
}

// Direct says when a chunk is read with O_DIRECT, where the file system
// allows it.
type Direct uint8

const (
	// DirectUncached reads a file the page cache holds whole from there,
	// any other straight from the disk into the buffer: no page-cache
	// pages to fill and copy out of, and a large read through the mount
	// leaves the chunk files out of the page cache, which then holds the
	// mounted files' pages only.
	DirectUncached Direct = iota
	// DirectAlways reads what is on the disk, not a cached copy, without
	// evicting what readers of the mount keep in the page cache; where
	// O_DIRECT is refused the file is read buffered and its pages are
	// dropped afterwards (verify).
	DirectAlways
	// DirectNever reads through the page cache.
	DirectNever
)

// Map says which page-cached chunk files may be mapped.
type Map uint8

const (
	MapNever Map = iota
	// MapCached maps any chunk file the page cache holds whole.
	MapCached
	// MapCompressed maps only compressed blobs: for callers that keep
	// plain data (the chunk cache), a plain blob would be copied out of
	// its mapping anyway, and reading it costs less than mapping it.
	MapCompressed
)

// ErrChunkFault is returned (by Blob.Do) when a mapped chunk file could
// not be read: it shrank or its disk failed while mapped.
var ErrChunkFault = errors.New("chunk file changed or failed while mapped")

// Blob is a chunk's raw DataBlob as ReadChunk returns it: in the
// caller's buffer or in memory of the backend's, or mapped from a chunk
// file. A mapping faults (SIGBUS) when its file is truncated under it,
// which cairn never does but a damaged disk or another program might:
// read a Blob, and whatever slices of it decoding returns, inside Do,
// which turns such a fault into ErrChunkFault. Release ends its life.
type Blob struct {
	d      chunk.Digest
	data   []byte
	mapped bool // data is a mapping: unmapped by Release
	inBuf  bool // data is ChunkOptions.Buf (or what replaced it)
}

// BlobOf is a Blob of bytes in memory, for backends that neither map
// nor read into the caller's buffer.
func BlobOf(d chunk.Digest, data []byte) Blob { return Blob{d: d, data: data} }

// Bytes returns the blob. Read a mapped one inside Do only.
func (b Blob) Bytes() []byte { return b.data }

// Mapped reports whether the blob is a mapping of its chunk file.
func (b Blob) Mapped() bool { return b.mapped }

// Do runs fn with the blob. A memory fault while fn reads the mapping
// (or slices of it, on this goroutine) is returned as ErrChunkFault;
// other panics go on.
func (b Blob) Do(fn func(blob []byte) error) (err error) {
	if !b.mapped {
		return fn(b.data)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverFault(b.d, &err)
	return fn(b.data)
}

// Release unmaps a mapped blob; slices of it are invalid afterwards.
// It does nothing to a blob in memory.
func (b *Blob) Release() {
	if b.mapped {
		unix.Munmap(b.data)
		*b = Blob{}
	}
}

// recoverFault, deferred where faults panic, turns a memory fault into
// ErrChunkFault in *err; other panics go on.
func recoverFault(d chunk.Digest, err *error) {
	p := recover()
	if p == nil {
		return
	}
	if re, ok := p.(runtime.Error); ok {
		if _, fault := re.(interface{ Addr() uintptr }); fault {
			*err = fmt.Errorf("chunk %s: %w: %v", d, ErrChunkFault, re)
			return
		}
	}
	panic(p)
}
