package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/objstore"
)

// How a writer of a remote store reuses a chunk without uploading it
// (the bucket's safety protocol, rule 2, in doc.go): a chunk of its base
// snapshot's indexes costs no request (the base cannot be forgotten while
// the writer's lease names it, and every index in the bucket is marked by
// a GC); any other is found by a HEAD. One whose LastModified is at or
// after the writer's start is kept by any GC (whose cutoff is at most the
// oldest live writer's start); an older one is touched (copied in place:
// LastModified becomes now) and then the GC lease is read: a GC in its
// sweep phase may have listed the chunk before the touch and delete it
// still, so the writer waits for that sweep to end and looks again; a
// chunk found gone is uploaded from the data the writer holds.

// writerStarts are the server start times of this process's live
// writers on the store (remote_leases.go reports them).
type writerStarts struct {
	mu     sync.Mutex
	starts []time.Time
}

// writerStarted records a writer whose lease the server created at start.
func (r *remote) writerStarted(start time.Time) {
	r.writers.mu.Lock()
	r.writers.starts = append(r.writers.starts, start)
	r.writers.mu.Unlock()
}

// writerEnded forgets a writer writerStarted recorded.
func (r *remote) writerEnded(start time.Time) {
	r.writers.mu.Lock()
	defer r.writers.mu.Unlock()
	if i := slices.IndexFunc(r.writers.starts, start.Equal); i >= 0 {
		r.writers.starts = slices.Delete(r.writers.starts, i, i+1)
	}
}

// writerStart is the newest start of this process's live writers (zero:
// none, and every reused chunk is touched). The newest is at or after
// the start of whichever writer reuses a chunk: a chunk modified since
// is newer than that writer's start too.
func (r *remote) writerStart() time.Time {
	r.writers.mu.Lock()
	defer r.writers.mu.Unlock()
	var t time.Time
	for _, s := range r.writers.starts {
		if s.After(t) {
			t = s
		}
	}
	return t
}

// RefreshKnownChunk is RefreshChunk for a chunk of the writer's base
// snapshot (its previous snapshot's indexes): a remote store takes it as
// present without a request (rule 2a); a local one touches it.
func (s *Store) RefreshKnownChunk(f *TouchFilter, d chunk.Digest) (bool, error) {
	if _, ok := s.backend.(probing); ok {
		f.Add(d)
		return true, nil
	}
	return s.RefreshChunk(f, d)
}

// keep makes chunk d, which a HEAD found as info, outlive any GC for
// this process's writers; false, with no error, tells it is gone.
func (c *remoteChunks) keep(ctx context.Context, d chunk.Digest, info objstore.ObjectInfo) (bool, error) {
	if ws := c.r.writerStart(); !ws.IsZero() && !info.LastModified.Before(ws) {
		return true, nil
	}
	if _, err := c.r.bucket.Touch(ctx, chunkKey(d)); err != nil {
		if errors.Is(err, objstore.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return c.settle(ctx, d)
}

// settle is called after chunk d was touched or written: if a GC is
// sweeping it waits for that sweep to end and reports whether the chunk
// is still there.
func (c *remoteChunks) settle(ctx context.Context, d chunk.Digest) (bool, error) {
	swept, err := c.r.waitSweep(ctx, time.Since(monoStart))
	if err != nil || !swept {
		return err == nil, err
	}
	_, err = c.r.bucket.Head(ctx, chunkKey(d))
	if errors.Is(err, objstore.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// monoStart is the origin of the process's monotonic instants.
var monoStart = time.Now()

// sweepPoll is how often a writer waiting for a sweep reads the GC lease.
var sweepPoll = time.Second

// sweepState is what a remote store knows of GC sweeps: the monotonic
// instant the last lease read that found no sweep was sent.
type sweepState struct {
	clearSince atomic.Int64
}

// waitSweep waits while a GC that is sweeping holds the GC lease; after
// is the instant (since monoStart) the caller's touch or write ended: a
// lease read sent after it that found no sweep answers for it too.
// swept tells that the caller waited (and must look at its chunk again).
func (r *remote) waitSweep(ctx context.Context, after time.Duration) (swept bool, err error) {
	if time.Duration(r.sweeps.clearSince.Load()) > after {
		return false, nil
	}
	sent := time.Since(monoStart)
	start, ok, err := r.sweeping(ctx)
	if err != nil || !ok {
		if err == nil {
			r.noteClear(sent)
		}
		return false, err
	}
	t := time.NewTicker(sweepPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-t.C:
		}
		now, ok, err := r.sweeping(ctx)
		if err != nil {
			return true, err
		}
		if !ok || !now.Equal(start) {
			return true, nil
		}
	}
}

// noteClear records that a lease read sent at instant sent found no
// sweep.
func (r *remote) noteClear(sent time.Duration) {
	for {
		old := r.sweeps.clearSince.Load()
		if int64(sent) <= old || r.sweeps.clearSince.CompareAndSwap(old, int64(sent)) {
			return
		}
	}
}

// sweeping reads the GC lease: ok when a live GC is in its sweep phase,
// start naming that GC.
func (r *remote) sweeping(ctx context.Context) (start time.Time, ok bool, err error) {
	leases, err := r.bucket.Leases(ctx, gcLeaseKey)
	if err != nil {
		return start, false, fmt.Errorf("bucket %s: read the GC lease: %w", r.cfg.Bucket, err)
	}
	for _, l := range leases {
		if l.Key != gcLeaseKey || l.Expired {
			continue
		}
		if ParseGCPhase(l.Holder.Data) == GCPhaseSweep {
			return l.Holder.Start, true, nil
		}
	}
	return start, false, nil
}
