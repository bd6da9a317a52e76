package s3store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/objstore"
)

// How a writer of a remote store reuses a chunk without uploading it
// (the bucket's safety protocol, rule 2, in docs/design/store.md): a
// chunk of its base snapshots' indexes costs no request (a base cannot
// be forgotten while the writer's lease names it, and every index in the
// bucket is marked by a GC); any other is stored with a conditional
// create (cond.go, chunks.go: insertChunk) or, when the writer looks
// first, looked for with a HEAD (a hint: a stale cache may answer it).
// A chunk found either way is touched (copied in place by the server:
// LastModified becomes now, checked in the answer), and then the sweep
// record is read (gc_record.go): a sweep that may have listed the chunk
// before the touch, and so delete it still, is waited for, and the
// chunk is stored again from the data the writer holds.

// keep makes chunk d, which the bucket says it has, outlive any GC for
// this process's writers: it is touched (its LastModified becomes the
// server's now, checked in the answer: objstore.CheckTouch) and then
// no sweep may have listed it before (sweptSince). false, with no
// error, tells the caller to store the chunk again from its data: it
// is gone, a sweep may have deleted it, or the touch's answer does not
// show it made.
func (c *remoteChunks) keep(ctx context.Context, d chunk.Digest) (bool, error) {
	kept, _, err := c.keepTagged(ctx, d)
	return kept, err
}

// keepTagged is keep that also tells the ETag the touch answered with.
func (c *remoteChunks) keepTagged(ctx context.Context, d chunk.Digest) (bool, string, error) {
	t := c.r.bucket.ServerTime()
	info, err := c.r.bucket.Touch(ctx, chunkKey(d))
	switch {
	case errors.Is(err, objstore.ErrNotExist):
		return false, "", nil
	case errors.Is(err, objstore.ErrBadAnswer):
		c.r.bucket.Logger().Warn("chunk touch not shown done: storing it again", "chunk", d, "err", err)
		return false, "", nil
	case err != nil:
		return false, "", err
	}
	swept, err := c.r.sweptSince(ctx, t, c.r.bucket.ServerTime())
	return !swept && err == nil, info.ETag, err
}

// sweepPoll is how often a writer waiting for a sweep reads the GC lease.
var sweepPoll = time.Second

// sweeping reads the GC lease (by its key: a listing may lag): ok when
// a live GC is in its sweep phase, start naming that GC.
func (r *remote) sweeping(ctx context.Context) (start time.Time, ok bool, err error) {
	l, err := objstore.ReadLease(ctx, r.bucket, gcLeaseKey)
	if errors.Is(err, objstore.ErrNotExist) {
		return start, false, nil
	}
	if err != nil {
		return start, false, fmt.Errorf("bucket %s: read the GC lease: %w", r.cfg.Bucket, err)
	}
	if !l.Expired && ParseGCPhase(l.Holder.Data) == GCPhaseSweep {
		return l.Holder.Start, true, nil
	}
	return start, false, nil
}
