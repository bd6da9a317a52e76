package chunkcache

import "context"

// flight is a chunk load in progress that gets may join: one load per
// chunk however many ask for it. Each waiter gets a reference of its
// own, taken when the load ends, so that the chunk's buffer is not
// recycled while one of them still reads it.
type flight struct {
	done    chan struct{}
	b       *chunkBuf
	err     error
	waiters int  // gets waiting, each owed a reference
	ended   bool // b and err are set, the references taken
}

// join waits for the load of cache key ck, starting it with load (in a
// goroutine of its own, not cancelled with ctx) unless one is in
// progress. load returns the chunk with one reference, which join hands
// on or gives back. The wait ends with ctx.
func (c *Cache) join(ctx context.Context, ck string, load func() (*chunkBuf, error)) (*chunkBuf, error) {
	c.fmu.Lock()
	f, ok := c.flight[ck]
	if ok {
		c.Stats.Collapsed.Add(1)
	} else {
		f = &flight{done: make(chan struct{})}
		c.flight[ck] = f
		go c.fly(ck, f, load)
	}
	f.waiters++
	c.fmu.Unlock()
	select {
	case <-f.done:
		return f.b, f.err
	case <-ctx.Done():
		c.fmu.Lock()
		ended := f.ended
		if !ended {
			f.waiters--
		}
		c.fmu.Unlock()
		if ended && f.err == nil {
			f.b.release() // taken for this waiter: give it back
		}
		return nil, ctx.Err()
	}
}

// fly runs load and hands a reference to each waiter of f.
func (c *Cache) fly(ck string, f *flight, load func() (*chunkBuf, error)) {
	b, err := load()
	c.fmu.Lock()
	delete(c.flight, ck)
	f.b, f.err, f.ended = b, err, true
	if err == nil {
		b.refs.Add(int32(f.waiters))
	}
	c.fmu.Unlock()
	if err == nil {
		b.release() // the load's own
	}
	close(f.done)
}
