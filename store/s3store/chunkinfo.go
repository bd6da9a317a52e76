package s3store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
)

// What verify and tape ask of a chunk beyond reading it, in a remote
// store: its size (a HEAD) and, for a corrupt one, moving it aside.

// remoteChunkTimeout bounds one of these requests (with its retries).
const remoteChunkTimeout = 5 * time.Minute

// StatChunk implements Backend: a HEAD of the chunk's object.
func (c *remoteChunks) StatChunk(ctx context.Context, d chunk.Digest) (store.ChunkInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteChunkTimeout)
	defer cancel()
	oi, err := c.r.bucket.Head(ctx, chunkKey(d))
	if errors.Is(err, objstore.ErrNotExist) {
		return store.ChunkInfo{}, fmt.Errorf("chunk %s: %w: %w", d, store.ErrMissingChunk, err)
	}
	if err != nil {
		return store.ChunkInfo{}, fmt.Errorf("stat chunk %s: %w", d, err)
	}
	return store.ChunkInfo{Size: oi.Size, Atime: oi.LastModified}, nil
}

// MarkBad implements Backend: the chunk's object is
// copied to <key>.N.bad (N the first free of 0..8, created only if
// absent; else 9, replaced), then deleted, so that a later backup
// uploads a good copy (it finds none by HEAD), as a local store's
// rename does. (PBS 4 moves a corrupt chunk of an S3 datastore to a .bad
// object too, by a copy and a delete as far as we know; not checked
// against its source here.) It returns the .bad object's address.
func (c *remoteChunks) MarkBad(ctx context.Context, d chunk.Digest) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteChunkTimeout)
	defer cancel()
	key := chunkKey(d)
	blob, _, err := c.r.bucket.Get(ctx, key, chunk.MaxBlobSize, nil)
	if err != nil {
		return "", fmt.Errorf("mark chunk %s bad: %w", d, err)
	}
	for n := 0; n < 10; n++ {
		bad := fmt.Sprintf("%s.%d.bad", key, n)
		cond := objstore.Cond{IfAbsent: n < 9}
		_, err := c.r.bucket.Put(ctx, bad, cond, blob)
		if errors.Is(err, objstore.ErrPrecondition) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("mark chunk %s bad: %w", d, err)
		}
		if err := c.r.bucket.Delete(ctx, key); err != nil {
			return "", fmt.Errorf("mark chunk %s bad: copied to %s, but: %w", d, bad, err)
		}
		return c.r.addr(bad), nil
	}
	return "", fmt.Errorf("mark chunk %s bad: unreachable", d)
}

// addr names a key of the bucket for messages: s3://bucket/prefix/key.
func (r *remote) addr(key string) string {
	cfg := r.cfg
	if cfg.Prefix != "" {
		return "s3://" + cfg.Bucket + "/" + cfg.Prefix + "/" + key
	}
	return "s3://" + cfg.Bucket + "/" + key
}
