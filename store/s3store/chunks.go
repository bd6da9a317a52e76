package s3store

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/objstore"
)

// remoteChunks is the Backend of a remote store: chunks are objects of
// the bucket (.chunks/XXXX/<digest>), read through the on-disk chunk
// cache; snapshot files are read from the local mirror of the bucket's
// snapshot directories (meta*.go keeps it).
//
// Its requests end with the caller's context or with the store's own,
// which Close cancels (bound).
type remoteChunks struct {
	mirror store.Backend // the local directory's snapshot files: ReadFile, OpenIndex
	r      *remote
}

var (
	_ store.Backend    = (*remoteChunks)(nil)
	_ store.Prober     = (*remoteChunks)(nil)
	_ store.Collecting = (*remoteChunks)(nil)
)

// Request concurrency of a remote store: latency, not bandwidth, is what
// a bucket's client waits on.
const (
	// RemoteReadahead is the chunks a sequential reader of a remote
	// store prefetches (DefaultReadahead for a local one).
	RemoteReadahead = 16
	// remoteParallelism is the uploads (HEAD, PUT) a writer keeps in
	// flight.
	remoteParallelism = 16
	// RemoteImageChunkSize is the fixed chunk size of images in a remote
	// store by default (DefaultImageChunkSize for a local one): PBS's 4
	// MiB, as a bucket takes a few hundred requests a second but large
	// objects at hundreds of MB/s, so a first backup's objects cost more
	// than the smaller incremental backups of smaller chunks save.
	RemoteImageChunkSize = chunk.DefaultChunkSize
)

func (c *remoteChunks) Parallelism() int { return remoteParallelism }
func (c *remoteChunks) Readahead() int   { return RemoteReadahead }
func (c *remoteChunks) ImageChunkSize() int {
	return RemoteImageChunkSize
}

// ReadChunk implements Backend: the on-disk cache, else the bucket (then
// the cache keeps a copy, unless the read is a scan's: opt.Scan).
// DirectAlways (verify) reads the bucket and leaves the cache alone.
func (c *remoteChunks) ReadChunk(ctx context.Context, d chunk.Digest, opt store.ChunkOptions) (store.Blob, error) {
	if err := ctx.Err(); err != nil {
		return store.BufBlob(d, opt.Buf[:0]), err
	}
	if opt.Direct != store.DirectAlways {
		if b, ok := c.r.cache.read(d, opt); ok {
			return b, nil
		}
	}
	data, _, err := c.r.bucket.Get(ctx, chunkKey(d), chunk.MaxBlobSize, opt.Buf)
	if err != nil {
		return store.BufBlob(d, opt.Buf[:0]), c.chunkError(d, err)
	}
	if opt.Direct != store.DirectAlways && !opt.Scan {
		// unchecked: a copy damaged on the way is found (its CRC) and
		// dropped by the cache's next read of it, and one damaged in the
		// bucket is what the bucket holds
		c.r.cache.add(d, data)
	}
	return store.BufBlob(d, data), nil
}

// chunkError maps a request's error on chunk d to the store's classes.
func (c *remoteChunks) chunkError(d chunk.Digest, err error) error {
	switch {
	case errors.Is(err, objstore.ErrNotExist):
		return fmt.Errorf("chunk %s: %w: %w", d, store.ErrMissingChunk, err)
	case errors.Is(err, objstore.ErrTooLarge):
		return fmt.Errorf("chunk %s: %w: object larger than a blob may be (%d bytes): %w", d, store.ErrCorruptChunk, chunk.MaxBlobSize, err)
	}
	return fmt.Errorf("chunk %s: bucket %s: %w", d, c.r.cfg.Bucket, err)
}

// bound derives from ctx a context that ends with the store's too (Close).
func (c *remoteChunks) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.r.ctx, func() { cancel(context.Cause(c.r.ctx)) })
	return ctx, func() { stop(); cancel(context.Canceled) }
}

// InsertChunkParts implements Backend.
func (c *remoteChunks) InsertChunkParts(ctx context.Context, d chunk.Digest, header, payload []byte) (bool, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	return c.insertChunk(ctx, d, header, payload, false)
}

// PutMissing implements Prober: chunk d was missing at the caller's look
// (which may have been a stale answer), or the caller did not look
// (LookFirst false).
func (c *remoteChunks) PutMissing(ctx context.Context, d chunk.Digest, header, payload []byte) (bool, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	return c.insertChunk(ctx, d, header, payload, true)
}

// insertChunk stores chunk d unless the bucket has it: a conditional
// PUT (If-None-Match: *), which the server decides against what it
// holds (a HEAD may be answered by a stale cache), with the body's MD5
// checked. Created, it is newer than any GC's cutoff. When the server
// says an object is there, it is kept as a reused chunk is
// (keepExisting), and existed is true. A server that does not honour
// the condition (cond.go) has the chunk looked for first, unless the
// caller did (looked), and written over (replace).
func (c *remoteChunks) insertChunk(ctx context.Context, d chunk.Digest, header, payload []byte, looked bool) (bool, error) {
	mode, err := c.r.condMode(ctx)
	if err != nil {
		return false, fmt.Errorf("insert chunk %s: %w", d, err)
	}
	if mode == condHonoured {
		_, err := c.r.bucket.Put(ctx, chunkKey(d), objstore.Cond{IfAbsent: true}, header, payload)
		switch {
		case err == nil:
			c.r.sawChunk(false)
			return false, nil
		case errors.Is(err, objstore.ErrPrecondition):
			c.r.sawChunk(true)
			return c.keepExisting(ctx, d, header, payload)
		case !errors.Is(err, objstore.ErrNotImplemented):
			return false, fmt.Errorf("insert %w", c.chunkError(d, err))
		}
		c.r.setCondMode(condRefused) // refused after all (for chunks): as probed so
		looked = false
	}
	if !looked {
		info, err := c.r.bucket.Head(ctx, chunkKey(d))
		c.r.sawChunk(err == nil)
		if err == nil && info.Size == int64(len(header)+len(payload)) {
			if kept, err := c.keep(ctx, d); kept || err != nil {
				return kept, err
			}
		}
	}
	return false, c.replace(ctx, d, header, payload)
}

// keepExisting keeps chunk d, which a conditional create found in the
// bucket: touched and not swept since (keep), it is kept when it is the
// object this writer would have stored (the touch's ETag is the MD5 of
// header+payload) or, its ETag telling nothing (another encoding of the
// chunk, a multipart upload, encryption of the server's), when it has
// its size (a HEAD); otherwise it is written over (replace).
func (c *remoteChunks) keepExisting(ctx context.Context, d chunk.Digest, header, payload []byte) (bool, error) {
	kept, etag, err := c.keepTagged(ctx, d)
	if err != nil {
		return false, err
	}
	if kept {
		if !c.r.cfg.ETagNotMD5 && sameMD5(etag, objstore.BodyMD5(header, payload)) {
			return true, nil
		}
		if info, err := c.r.bucket.Head(ctx, chunkKey(d)); err == nil && info.Size == int64(len(header)+len(payload)) {
			return true, nil
		}
	}
	return false, c.replace(ctx, d, header, payload)
}

// sameMD5 tells whether an ETag is the MD5 sum (quotes and case
// ignored).
func sameMD5(etag string, sum [md5.Size]byte) bool {
	return strings.EqualFold(strings.Trim(etag, `"`), hex.EncodeToString(sum[:]))
}

// replace writes chunk d over the object at its key; a sweep that may
// have listed that object before the write (and delete it after) is
// waited for and the write made again, at most three times.
func (c *remoteChunks) replace(ctx context.Context, d chunk.Digest, header, payload []byte) error {
	for try := 0; ; try++ {
		t := c.r.bucket.ServerTime()
		if _, err := c.r.bucket.Put(ctx, chunkKey(d), objstore.Cond{}, header, payload); err != nil {
			return fmt.Errorf("insert %w", c.chunkError(d, err))
		}
		swept, clear, err := c.r.sweptUntil(ctx, t, c.r.bucket.ServerTime())
		if err != nil || !swept {
			return err
		}
		if try == 2 {
			return fmt.Errorf("insert chunk %s: a garbage collection swept while it was written, three times", d)
		}
		if err := c.r.waitServerTime(ctx, clear); err != nil {
			return err
		}
	}
}

// ReadFile implements Backend: the mirror's file.
func (c *remoteChunks) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	return c.mirror.ReadFile(ctx, name, limit)
}

// OpenIndex implements Backend: the mirror's file.
func (c *remoteChunks) OpenIndex(ctx context.Context, name string) (index.Index, error) {
	return c.mirror.OpenIndex(ctx, name)
}

// HasChunk implements Backend (a HEAD).
func (c *remoteChunks) HasChunk(ctx context.Context, d chunk.Digest) (bool, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	info, err := c.r.bucket.Head(ctx, chunkKey(d))
	if errors.Is(err, objstore.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for %w", c.chunkError(d, err))
	}
	return info.Size > 0, nil
}

// TouchChunk implements Backend: the chunk is kept for this process's
// writers (keep); a missing chunk is an error wrapping fs.ErrNotExist.
func (c *remoteChunks) TouchChunk(ctx context.Context, d chunk.Digest) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	info, err := c.r.bucket.Head(ctx, chunkKey(d))
	if err == nil && info.Size == 0 {
		err = objstore.ErrNotExist // an empty object is no chunk
	}
	if err == nil {
		var kept bool
		if kept, err = c.keep(ctx, d); err == nil && !kept {
			err = objstore.ErrNotExist
		}
	}
	if err == nil || errors.Is(err, objstore.ErrNotExist) {
		c.r.sawChunk(err == nil)
	}
	if err != nil {
		return fmt.Errorf("touch %w", c.chunkError(d, err))
	}
	return nil
}

// WalkChunks implements Backend: a listing of .chunks/ in key order,
// which is digest order (in parallel key ranges: chunks_list.go). Keys that are not .chunks/XXXX/<digest> with
// XXXX the digest's first four digits are skipped.
func (c *remoteChunks) WalkChunks(ctx context.Context, fn func(chunk.Digest) error) error {
	for info, err := range listChunkObjects(ctx, c.r.bucket) {
		if err != nil {
			return fmt.Errorf("walk chunks: bucket %s: %w", c.r.cfg.Bucket, err)
		}
		d, ok := chunkOfKey(info.Key)
		if !ok {
			continue
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

// chunkOfKey parses a chunk's key.
func chunkOfKey(key string) (chunk.Digest, bool) {
	dir, name := path.Split(key)
	if len(name) != 2*chunk.DigestSize || dir != chunkDir+"/"+name[:4]+"/" || strings.ToLower(name) != name {
		return chunk.Digest{}, false
	}
	d, err := chunk.ParseDigest(name)
	return d, err == nil
}

func newRemote(root string, cfg Config, b objstore.Objects) *remote {
	ctx, cancel := context.WithCancel(context.Background())
	return &remote{cfg: cfg, bucket: b, ctx: ctx, cancel: cancel, cache: newDiskCache(root, cfg.CacheSize, b.Logger())}
}

// close cancels the store's own requests and waits for a cache trim.
func (r *remote) close() {
	r.cancel()
	r.cache.close()
}
