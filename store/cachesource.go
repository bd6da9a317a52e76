package store

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/chunkcache"
)

// NewCache returns a chunk cache (package chunkcache) of src's chunks
// bounded to maxBytes of decoded data (0: chunkcache.DefaultSize).
func NewCache(src ChunkReader, maxBytes int64) (*chunkcache.Cache, error) {
	return chunkcache.New(cacheSource{src}, maxBytes)
}

// cacheSource is a ChunkReader as the chunk cache reads it: into the
// cache's buffer, or mapped when the blob is a compressed one
// (MapCompressed); a scan's (ChunkOptions.Scan).
type cacheSource struct{ r ChunkReader }

func (s cacheSource) ReadBlob(ctx context.Context, d chunk.Digest, buf []byte, scan bool) (chunkcache.Blob, error) {
	b, err := s.r.ReadChunk(ctx, d, ChunkOptions{Buf: buf, Map: MapCompressed, Scan: scan})
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// Logger is the source's logger (the store's, where the cache logs a
// load's panic), or one that discards.
func (s cacheSource) Logger() *slog.Logger {
	if l, ok := s.r.(interface{ Logger() *slog.Logger }); ok {
		return l.Logger()
	}
	return slog.New(slog.DiscardHandler)
}

// IsChunkError reports whether err is a missing or corrupt chunk.
func IsChunkError(err error) bool {
	return errors.Is(err, ErrCorruptChunk) || errors.Is(err, ErrMissingChunk)
}
