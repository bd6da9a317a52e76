package s3store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
)

// The sweep record (rules 2 and 4, docs/design/store.md): gcSweepKey says whether a
// GC is sweeping ({"state":"sweeping"}, written before its listing of
// the chunks starts) or ended its sweep ({"state":"ended"}, written
// after its last delete); the object's LastModified is the server's
// time of that write. A writer that touched a chunk, or wrote one over
// an object that may be old, asks sweptSince(t), t the server's time
// before its request: a sweep may have listed the chunk before the
// request and deleted it after, exactly when a sweep runs now (the writer
// waits for it to end) or ended after t. Then the writer stores the chunk
// again from the data it holds. The record is read with a Get (its latest
// write), never found by a listing; a GC lease that says "sweep" counts
// too (a GC that died between the lease's update and the record's).
//
// A GC killed while sweeping leaves "sweeping": its deletes stopped by
// its lease's last renewal plus gcLeaseTTL (they are issued only while
// the lease is held, each batch within gcLeaseTTL/4), so the record is
// taken as ended then.

// gcSweepKey is the sweep record.
const gcSweepKey = ".cairn/gc-sweep.json"

// Sweep record states.
const (
	sweepRunning = "sweeping"
	sweepEnded   = "ended"
)

// recordSlack covers HTTP dates' second and the client's estimate of the
// server's clock (ServerTime).
const recordSlack = 2 * time.Second

type sweepRecord struct {
	State string `json:"state"`
}

// writeSweepRecord writes the record's state (the GC side).
func (c *remoteCollector) writeSweepRecord(ctx context.Context, state string) error {
	body, _ := json.Marshal(sweepRecord{State: state}) // a struct of strings always marshals
	if _, err := c.b.Put(ctx, gcSweepKey, objstore.Cond{}, body); err != nil {
		return fmt.Errorf("bucket %s: sweep record: %w", c.s.remote.cfg.Bucket, err)
	}
	return nil
}

// sweepCache remembers the last look that found no sweep running: at
// server time `at`, the last sweep had ended at `ended` (zero: never).
// A request made after `at`... is asked again; one made before, whose
// t is after ended+slack, is answered from it. Looks are shared: one at
// a time is in the air (cur), and a request that ended before it began
// takes its answer; one that ended later waits for it to end and then
// starts or joins the next. Writers that touch or replace many chunks
// at once so make a look (two GETs) per look's time, not per chunk.
type sweepCache struct {
	mu    sync.Mutex
	at    time.Time // server time before the look's requests
	ended time.Time
	cur   *sweepLook
}

// sweepLook is one look at the sweep's state (sweepState), shared.
type sweepLook struct {
	at      time.Time // server time before its requests
	done    chan struct{}
	running bool
	ended   time.Time
	err     error
}

// sweptSince tells whether a GC sweep may have deleted a chunk the
// writer touched or wrote by a request sent at server time t (or
// later): a sweep running now (waited for; swept is then true) or one
// that ended after t.
func (r *remote) sweptSince(ctx context.Context, t time.Time, done time.Time) (bool, error) {
	swept, _, err := r.sweptUntil(ctx, t, done)
	return swept, err
}

// sweptUntil is sweptSince that also tells, when swept, the server time
// after which a request is clear of that sweep.
func (r *remote) sweptUntil(ctx context.Context, t time.Time, done time.Time) (bool, time.Time, error) {
	r.sweepLook.mu.Lock()
	at, ended := r.sweepLook.at, r.sweepLook.ended
	r.sweepLook.mu.Unlock()
	if !at.IsZero() && done.Before(at) && ended.Add(recordSlack).Before(t) {
		return false, time.Time{}, nil
	}
	swept := false
	for {
		running, endedAt, err := r.lookSweep(ctx, done)
		if err != nil {
			return true, time.Time{}, err
		}
		if !running {
			clear := endedAt.Add(recordSlack)
			return swept || !clear.Before(t), clear, nil
		}
		swept = true
		select {
		case <-ctx.Done():
			return true, time.Time{}, ctx.Err()
		case <-objstore.LeaseClockOf(r.bucket).After(sweepPoll):
		}
		done = r.bucket.ServerTime() // a look from now on
	}
}

// lookSweep is sweepState as seen by a look begun after server time
// done: the one in the air when it began after done, else a new one.
func (r *remote) lookSweep(ctx context.Context, done time.Time) (running bool, ended time.Time, err error) {
	c := &r.sweepLook
	for {
		c.mu.Lock()
		l := c.cur
		if l == nil {
			l = &sweepLook{at: r.bucket.ServerTime(), done: make(chan struct{})}
			c.cur = l
			c.mu.Unlock()
			l.running, l.ended, l.err = r.sweepState(ctx)
			c.mu.Lock()
			if l.err == nil && !l.running && l.at.After(c.at) {
				c.at, c.ended = l.at, l.ended
			}
			c.cur = nil
			c.mu.Unlock()
			close(l.done)
			return l.running, l.ended, l.err
		}
		c.mu.Unlock()
		select {
		case <-l.done:
		case <-ctx.Done():
			return false, ended, ctx.Err()
		}
		if done.Before(l.at) && l.err == nil {
			return l.running, l.ended, nil
		}
		// begun before the request ended, or failed (perhaps by its
		// runner's context): the next look
	}
}

// sweepState reads the GC lease and the sweep record: whether a sweep
// runs now, and when the last one ended (zero: none recorded).
func (r *remote) sweepState(ctx context.Context) (running bool, ended time.Time, err error) {
	if _, ok, err := r.sweeping(ctx); err != nil || ok {
		return ok, ended, err
	}
	data, info, err := r.bucket.Get(ctx, gcSweepKey, 64<<10, nil)
	if errors.Is(err, objstore.ErrNotExist) {
		return false, ended, nil
	}
	if err != nil {
		return false, ended, fmt.Errorf("bucket %s: sweep record: %w", r.cfg.Bucket, err)
	}
	var rec sweepRecord
	if json.Unmarshal(data, &rec) != nil || rec.State == sweepEnded {
		return false, info.LastModified, nil
	}
	// "sweeping" with no live GC lease in its sweep phase: a GC that
	// died (or is between its lease's release and this record's end):
	// its deletes ended by its lease's last renewal plus the TTL
	end := info.LastModified.Add(2 * gcLeaseTTL)
	if l, err := objstore.ReadLease(ctx, r.bucket, gcLeaseKey); err == nil {
		end = l.Renewed.Add(gcLeaseTTL)
	}
	if end.After(r.bucket.ServerTime()) {
		return true, ended, nil // it may delete still: wait
	}
	return false, end, nil
}

// waitServerTime waits until the server's clock is past t (waiting by
// the bucket's clock: a test's moves on).
func (r *remote) waitServerTime(ctx context.Context, t time.Time) error {
	d := t.Sub(r.bucket.ServerTime())
	if d < 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-objstore.LeaseClockOf(r.bucket).After(d + 10*time.Millisecond):
		return nil
	}
}

// endDeadSweep, run by a GC that took the lease, ends the record of a
// GC that died sweeping: the lease was taken over only once expired, and
// the dead GC issued deletes only while it held it (each batch within
// gcLeaseTTL/4), so they have ended. Writers then stop waiting for it.
func (c *remoteCollector) endDeadSweep(ctx context.Context) error {
	data, _, err := c.b.Get(ctx, gcSweepKey, 64<<10, nil)
	if errors.Is(err, objstore.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bucket %s: sweep record: %w", c.s.remote.cfg.Bucket, err)
	}
	var rec sweepRecord
	if json.Unmarshal(data, &rec) == nil && rec.State == sweepEnded {
		return nil
	}
	return c.writeSweepRecord(ctx, sweepEnded)
}
