package storetest

import (
	"context"
	"sync"

	"github.com/cairnfs/cairn/store/objstore/memstore"
)

// A Pause is a pause point on an in-memory bucket: the first call that
// match accepts waits (on its caller's goroutine, before it is served)
// until the test calls Release; every other call goes through. The
// interleaving a rule must survive is made, not waited for.
type Pause struct {
	reached, released chan struct{}
	once, release     sync.Once
}

// PauseAt sets b's hook to a pause at the first call match accepts
// (replacing any hook; SetHook(nil) ends it).
func PauseAt(b *memstore.Bucket, match func(*memstore.Call) bool) *Pause {
	p := &Pause{reached: make(chan struct{}), released: make(chan struct{})}
	b.SetHook(func(ctx context.Context, c *memstore.Call) error {
		first := false
		if match(c) {
			p.once.Do(func() { first = true })
		}
		if !first {
			return nil
		}
		close(p.reached)
		select {
		case <-p.released:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	return p
}

// Reached is closed once the paused call has come.
func (p *Pause) Reached() <-chan struct{} { return p.reached }

// Release lets the paused call (and a later one) go on.
func (p *Pause) Release() { p.release.Do(func() { close(p.released) }) }
