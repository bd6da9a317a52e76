package objstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// Acquire takes the lease at key for h, waiting up to wait while another
// live holder has it (then *HeldError); an expired one is taken over.
//
// The lease is created with If-None-Match: * ; an existing one is
// expired when its LastModified plus the TTL its body declares is before
// the server's time (ServerTime), and is then replaced with If-Match on
// the ETag read, so that of two hosts taking it over one wins. A lease
// whose writing process has ended on this machine (same boot, same PID
// namespace) is taken over the same way without waiting for its TTL. The
// lease's Start (and h.Start in its body) is the server's LastModified
// of that write. A goroutine renews it every ttl/5 until Release.
// Renewals and waits are timed by b's LeaseClock.
func Acquire(ctx context.Context, b Objects, key string, h Holder, ttl, wait time.Duration) (*Lease, error) {
	if ttl < minLeaseTTL || ttl > maxLeaseTTL {
		return nil, fmt.Errorf("lease %s: TTL %v outside [%v, %v]", key, ttl, minLeaseTTL, maxLeaseTTL)
	}
	if len(h.Data) > maxLeaseData {
		return nil, fmt.Errorf("lease %s: data of %d bytes, more than %d", key, len(h.Data), maxLeaseData)
	}
	l := &Lease{
		b: b, clk: LeaseClockOf(b), key: key, ttl: ttl,
		body: leaseBody{Holder: h, Token: newToken(), TTLMs: ttl.Milliseconds(), Node: localNode(), PID: os.Getpid()},
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	l.body.Holder.Start = time.Time{}
	deadline := l.clk.Now().Add(wait)
	for {
		err := l.write(ctx, Cond{IfAbsent: true})
		if err == nil {
			return l.started(ctx)
		}
		if !errors.Is(err, ErrPrecondition) {
			return nil, err
		}
		cur, info, err := readLease(ctx, b, key)
		if errors.Is(err, ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, err
		}
		if dead := deadLocalHolder(cur); dead || expired(info.LastModified, cur, b.ServerTime()) {
			err := l.write(ctx, Cond{IfMatch: info.ETag})
			if err == nil {
				b.Logger().Info("s3 lease taken over", "bucket", b.Config().Bucket, "key", fullKey(b, key),
					"last_renewed", info.LastModified, "holder_process_ended", dead)
				return l.started(ctx)
			}
			if !errors.Is(err, ErrPrecondition) && !errors.Is(err, ErrNotExist) {
				return nil, err
			}
			continue // another took it over, or released it: look again
		}
		if !l.clk.Now().Before(deadline) {
			he := &HeldError{Key: key}
			if cur != nil {
				he.Holder = cur.Holder
			}
			return nil, he
		}
		poll := min(max(ttl/10, 100*time.Millisecond), 2*time.Second, deadline.Sub(l.clk.Now()))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lease %s: waiting for its holder: %w", key, ctx.Err())
		case <-l.clk.After(poll):
		}
	}
}

// started records the server time of the lease's creation (its
// LastModified) in the lease and its body, and starts the renewer.
func (l *Lease) started(ctx context.Context) (*Lease, error) {
	info, err := l.b.Head(ctx, l.key)
	if err == nil && info.ETag != l.etag {
		return nil, fmt.Errorf("lease %s: taken over right after its creation", l.key)
	}
	if err == nil {
		l.start = info.LastModified
		l.body.Holder.Start = info.LastModified
		err = l.write(ctx, Cond{IfMatch: l.etag})
	}
	if err != nil {
		if !errors.Is(err, ErrPrecondition) { // still ours: give it back
			l.b.Delete(context.WithoutCancel(ctx), l.key) //nolint:errcheck // best effort: it expires anyway
		}
		return nil, err
	}
	// the ticker starts before Acquire returns: a test that moves a
	// clock of its own on right after finds it
	tick, stop := l.clk.NewTicker(l.ttl / 5)
	go l.renew(tick, stop, l.clk.Now())
	return l, nil
}

// Leases lists the leases under prefix. A lease object that cannot be
// read is listed with an empty Holder and expires DefaultLeaseTTL after
// its last write. One whose process has ended on this machine is listed
// as Expired. A listing may lag: what must not miss a lease reads it by
// its key (ReadLease).
func Leases(ctx context.Context, b Objects, prefix string) ([]LeaseInfo, error) {
	var out []LeaseInfo
	for obj, err := range b.List(ctx, prefix, "") {
		if err != nil {
			return nil, err
		}
		li, err := ReadLease(ctx, b, obj.Key)
		if errors.Is(err, ErrNotExist) {
			continue // released since the listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, li)
	}
	return out, nil
}

// ReadLease reads the lease at key (a Get: its latest write); ErrNotExist
// when there is none.
func ReadLease(ctx context.Context, b Objects, key string) (LeaseInfo, error) {
	cur, info, err := readLease(ctx, b, key)
	if err != nil {
		return LeaseInfo{}, err
	}
	li := LeaseInfo{Key: key, Renewed: info.LastModified}
	if cur != nil {
		li.Holder = cur.Holder
	}
	li.Expired = deadLocalHolder(cur) || expired(info.LastModified, cur, b.ServerTime())
	return li, nil
}

// Acquire is the package's Acquire on b.
func (b *Bucket) Acquire(ctx context.Context, key string, h Holder, ttl, wait time.Duration) (*Lease, error) {
	return Acquire(ctx, b, key, h, ttl, wait)
}

// Leases is the package's Leases on b.
func (b *Bucket) Leases(ctx context.Context, prefix string) ([]LeaseInfo, error) {
	return Leases(ctx, b, prefix)
}

// clockSlack covers the second's resolution of HTTP dates (LastModified
// and Date are truncated): a lease is expired only when it is for sure.
const clockSlack = time.Second

// expired: a lease last written at renewed, with body cur, by the
// server's clock now.
func expired(renewed time.Time, cur *leaseBody, now time.Time) bool {
	return renewed.Add(ttlOf(cur, DefaultLeaseTTL) + clockSlack).Before(now)
}
