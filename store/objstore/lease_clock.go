package objstore

import "time"

// LeaseClock times what a lease does by itself: its renewals (every
// TTL/5, given up after TTL/2 without one) and an Acquire's waits for a
// live holder. A Bucket's is the local clock; an Objects may bring its
// own (a method LeaseClock() LeaseClock: memstore's, which a test moves
// on), so that a test makes a renewal happen, or not, instead of waiting
// for it. Expiry is judged by the server's clock (ServerTime), never by
// this one.
type LeaseClock interface {
	Now() time.Time
	// After receives once d has passed.
	After(d time.Duration) <-chan time.Time
	// NewTicker ticks every d until stop is called.
	NewTicker(d time.Duration) (c <-chan time.Time, stop func())
}

// localClock is the host's clock.
type localClock struct{}

func (localClock) Now() time.Time                         { return time.Now() }
func (localClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (localClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// LeaseClockOf is o's clock for leases (and for a client's other waits
// on the server's time): its own, or the host's.
func LeaseClockOf(o Objects) LeaseClock {
	if c, ok := o.(interface{ LeaseClock() LeaseClock }); ok {
		return c.LeaseClock()
	}
	return localClock{}
}
