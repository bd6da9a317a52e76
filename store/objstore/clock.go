package objstore

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// clock is the HTTP transport of a Bucket: it records the Date of every
// response and when (by the local monotonic clock) it was seen, so that
// ServerTime can estimate the server's clock without comparing it with
// the host's.
type clock struct {
	base http.RoundTripper

	mu   sync.Mutex
	date time.Time // the last response's Date
	seen time.Time // local time (monotonic) it arrived

	answered atomic.Bool // a response came back (any status)
}

func (c *clock) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil {
		c.answered.Store(true)
		if d, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
			now := time.Now()
			c.mu.Lock()
			c.date, c.seen = d, now
			c.mu.Unlock()
		}
	}
	return resp, err
}

// now estimates the server's clock: the last Date plus the time elapsed
// since. Date has a one-second resolution, truncated: the estimate is
// early by up to a second plus the response's latency, which errs on the
// safe side for leases (an expiry is seen late, never early).
func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen.IsZero() {
		return time.Now()
	}
	return c.date.Add(time.Since(c.seen))
}

// ServerTime estimates the server's clock now.
func (b *Bucket) ServerTime() time.Time { return b.clock.now() }
