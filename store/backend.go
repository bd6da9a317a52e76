package store

import (
	"context"
	"path"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
)

// Backend is where a store's chunks and snapshot files live, the seam
// between keeping them and doing something with them: the local
// directory (localDir) and a bucket (store/s3store). Every method takes
// the caller's context (a bucket's requests end with it) and says when
// it could not do what was asked. What only one side can do is an
// optional interface: chunkFiles (the local directory's files), Prober
// and Collecting (a bucket's).
//
// The snapshot metadata's other seam is MetaStore (meta.go).
type Backend interface {
	ChunkReader
	// InsertChunkParts stores the blob header+payload as chunk d. An
	// existing chunk of the same size is kept and only touched (dedup);
	// one of another size, or empty, is replaced. existed tells whether
	// the chunk was already there.
	InsertChunkParts(ctx context.Context, d chunk.Digest, header, payload []byte) (existed bool, err error)
	// HasChunk reports whether chunk d exists with a non-zero size; an
	// error is a look that failed, not a missing chunk.
	HasChunk(ctx context.Context, d chunk.Digest) (bool, error)
	// TouchChunk marks chunk d as in use now (GC's mark); a missing
	// chunk's error wraps fs.ErrNotExist.
	TouchChunk(ctx context.Context, d chunk.Digest) error
	// WalkChunks calls fn for every chunk, in the backend's order.
	WalkChunks(ctx context.Context, fn func(chunk.Digest) error) error
	// StatChunk tells chunk d's stored size and when it was last marked
	// in use (a missing chunk is ErrMissingChunk and fs.ErrNotExist).
	StatChunk(ctx context.Context, d chunk.Digest) (ChunkInfo, error)
	// MarkBad moves corrupt chunk d aside, to <digest>.N.bad, and returns
	// where, so that a later backup stores a good copy.
	MarkBad(ctx context.Context, d chunk.Digest) (string, error)
	// ReadFile reads a whole snapshot file (a manifest, a blob), named
	// relative to the store (snapshotFile), of at most limit bytes. A
	// missing file's error wraps fs.ErrNotExist; a larger one is
	// refused, with an *errTooLarge, before it is read.
	ReadFile(ctx context.Context, name string, limit int64) ([]byte, error)
	// OpenIndex opens a snapshot's index file (.fidx, .didx), named
	// relative to the store (snapshotFile), for random access; it is not
	// checked against a manifest (Store.OpenSnapshotIndex does that).
	OpenIndex(ctx context.Context, name string) (index.Index, error)
}

// Prober is the optional side of a Backend whose chunks cost a request
// each (a bucket's): TouchChunk finds out by itself whether the chunk is
// there (no HasChunk first), and the store asks it how many requests to
// keep in flight and how large to cut images.
type Prober interface {
	// PutMissing stores chunk d that the caller's look found missing
	// just now (ReuseChunkContext), or that it did not look for
	// (LookFirst false): no second look. existed tells the store had
	// it after all (another writer, or another worker of the same
	// backup with the same chunk, stored it in between, or the caller
	// did not look).
	PutMissing(ctx context.Context, d chunk.Digest, header, payload []byte) (existed bool, err error)
	// LookFirst tells whether a writer should look for a chunk none of
	// its base snapshots has before it stores it (ReuseChunkContext,
	// then PutMissing); false: PutMissing alone looks and stores in
	// one request (a conditional create).
	LookFirst() bool
	// Parallelism is how many requests a writer should keep in flight.
	Parallelism() int
	// Readahead is how many chunks a sequential reader should prefetch.
	Readahead() int
	// ImageChunkSize is the fixed chunk size of images by default.
	ImageChunkSize() int
}

// SnapshotFile names a snapshot's file relative to the store.
func SnapshotFile(snap Snapshot, name string) string {
	return path.Join(snap.NS.Rel(), snap.Type, snap.ID, snap.TimeString(), name)
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
	// instead of copied; the blob is then valid until Release. Reads
	// with DirectAlways are never mapped (they want the disk's copy).
	Map Map
	// Scan says the chunk is read by a scan, the sequential reads of a
	// reader that seldom comes back to a chunk (chunkcache's LimitScans:
	// an image read through the mount): a remote store keeps no copy in
	// its on-disk chunk cache, whose writes were 38% of the mount's CPU
	// in a cold read of 512 MiB at 20 ms, and which a dd of a large
	// image would otherwise flush of what other readers come back to.
	Scan bool
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
	// MapNever reads every chunk (the default).
	MapNever Map = iota
	// MapCached maps any chunk file the page cache holds whole.
	MapCached
	// MapCompressed maps only compressed blobs: for callers that keep
	// plain data (the chunk cache), an uncompressed blob (plain or
	// encrypted) would be copied (or decrypted) out of its mapping
	// anyway, and reading it costs less than mapping and unmapping it.
	MapCompressed
)
