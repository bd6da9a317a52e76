package memstore

import (
	"sync"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
)

// The bucket's clock is the host's plus what Advance added: LastModified,
// ServerTime and the leases' clock (objstore.LeaseClock: renewals, an
// Acquire's waits) all read it. A timer or ticker of the leases' clock
// fires when that clock reaches it, by real time passing or by Advance,
// so that a test makes a lease renew (or its renewals fail for half its
// TTL) by moving the clock on, instead of waiting for it.

// timer is an After (period 0) or a ticker of the leases' clock.
type timer struct {
	at     time.Time     // when it fires next (the bucket's clock)
	period time.Duration // a ticker's
	c      chan time.Time
	stop   chan struct{} // a ticker's, closed by its stop
	real   *time.Timer   // fires it when real time reaches at
}

// timers are the bucket's pending timers.
type timers struct {
	mu  sync.Mutex
	all map[*timer]bool
}

// Advance moves the bucket's clock on by d (LastModified, ServerTime and
// the leases' clock) and fires the timers it reached. A ticker's tick
// (a lease's renewal) is handed over before Advance returns: Advance
// waits until the lease's renewer takes it, which it does once its
// previous renewal is done (so a renewer stuck in a call a hook holds
// holds Advance up too).
func (b *Bucket) Advance(d time.Duration) {
	b.offset.Add(int64(d))
	for _, t := range b.due() {
		b.fire(t)
	}
}

// LeaseClock implements objstore's optional clock for leases: the
// bucket's clock.
func (b *Bucket) LeaseClock() objstore.LeaseClock { return leaseClock{b} }

type leaseClock struct{ b *Bucket }

func (c leaseClock) Now() time.Time { return c.b.ServerTime() }

func (c leaseClock) After(d time.Duration) <-chan time.Time {
	return c.b.newTimer(d, 0).c
}

func (c leaseClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := c.b.newTimer(d, d)
	return t.c, func() { c.b.stopTimer(t) }
}

func (b *Bucket) newTimer(d, period time.Duration) *timer {
	t := &timer{at: b.ServerTime().Add(d), period: period, c: make(chan time.Time), stop: make(chan struct{})}
	if period == 0 {
		t.c = make(chan time.Time, 1) // an After's one tick never waits
	}
	b.timers.mu.Lock()
	if b.timers.all == nil {
		b.timers.all = make(map[*timer]bool)
	}
	b.timers.all[t] = true
	t.real = time.AfterFunc(max(d, 0), func() { b.ring(t) })
	b.timers.mu.Unlock()
	return t
}

func (b *Bucket) stopTimer(t *timer) {
	b.timers.mu.Lock()
	defer b.timers.mu.Unlock()
	if b.timers.all[t] {
		delete(b.timers.all, t)
		t.real.Stop()
		close(t.stop)
	}
}

// due claims the timers the clock has reached: an After is dropped, a
// ticker's next tick set one period on.
func (b *Bucket) due() []*timer {
	now := b.ServerTime()
	b.timers.mu.Lock()
	defer b.timers.mu.Unlock()
	var out []*timer
	for t := range b.timers.all {
		if !t.at.After(now) {
			out = append(out, b.claim(t, now))
		}
	}
	return out
}

// claim takes t's firing at now (b.timers.mu held).
func (b *Bucket) claim(t *timer, now time.Time) *timer {
	if t.period == 0 {
		delete(b.timers.all, t)
		t.real.Stop()
	} else {
		t.at = now.Add(t.period)
		t.real.Reset(t.period)
	}
	return t
}

// ring is t's real timer: it fires t when the clock has reached it (an
// Advance may have fired it already and set it on).
func (b *Bucket) ring(t *timer) {
	now := b.ServerTime()
	b.timers.mu.Lock()
	if !b.timers.all[t] {
		b.timers.mu.Unlock()
		return
	}
	if t.at.After(now) {
		t.real.Reset(t.at.Sub(now))
		b.timers.mu.Unlock()
		return
	}
	b.claim(t, now)
	b.timers.mu.Unlock()
	b.fire(t)
}

// fire delivers a tick: an After's at once (its channel has room), a
// ticker's (unbuffered) once its reader takes it or stops it.
func (b *Bucket) fire(t *timer) {
	now := b.ServerTime()
	if t.period == 0 {
		t.c <- now
		return
	}
	select {
	case t.c <- now:
	case <-t.stop:
	}
}
