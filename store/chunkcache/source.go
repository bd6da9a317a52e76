package chunkcache

import (
	"context"

	"github.com/cairnfs/cairn/chunk"
)

// Source is where a Cache loads chunks from: a store's chunk reader
// (store.NewCache wraps one).
type Source interface {
	// ReadBlob reads chunk d's raw DataBlob: into buf (grown as needed;
	// nil: a new buffer) when it is read, or mapped from its chunk file
	// when it is a compressed blob the page cache holds whole (the cache
	// keeps plain data: an uncompressed blob would be copied or
	// decrypted out of a mapping anyway). A chunk that is not there is
	// the source's missing-chunk error. scan says the chunk is read for
	// a scan (the sequential reads of a reader that LimitScans), which
	// seldom comes back to it: a source with a cache of its own (a
	// remote store's on-disk chunk cache) need not keep a copy.
	ReadBlob(ctx context.Context, d chunk.Digest, buf []byte, scan bool) (Blob, error)
}

// Blob is a chunk's raw DataBlob as a Source returns it.
type Blob interface {
	// Bytes returns the blob; a mapped one is read inside Do only.
	Bytes() []byte
	// InBuf reports whether the blob lies in the buffer ReadBlob was
	// given, or in the one that replaced it when it was too small: the
	// cache may keep that memory (it decodes in place, or recycles it).
	InBuf() bool
	// Do runs fn with the blob; a fault reading a mapping (a chunk file
	// that shrank) is its error, not a crash.
	Do(fn func(blob []byte) error) error
	// Release ends the blob's life (unmaps a mapped one).
	Release()
}
