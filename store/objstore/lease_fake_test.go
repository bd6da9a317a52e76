package objstore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
)

// Rule 1 (docs/design/store.md): two hosts take over one expired lease
// at once; both read it expired, then both write it If-Match the ETag
// they read (a pause point holds the first write until the second
// comes). The bucket accepts one: exactly one of them holds the lease.
func TestLeaseTakeoverRace(t *testing.T) {
	ctx := context.Background()
	b := memstore.New(objstore.Config{})
	const ttl = 2 * time.Second
	dead := `{"holder":{"host":"dead"},"token":"t","ttl_ms":2000,"seq":1}`
	if _, err := b.Put(ctx, "l", objstore.Cond{IfAbsent: true}, []byte(dead)); err != nil {
		t.Fatal(err)
	}
	b.Advance(ttl + 1100*time.Millisecond)
	var both sync.WaitGroup // the two takeovers' writes, held until both came
	both.Add(2)
	var writes atomic.Int32
	b.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpPut && !c.Cond.IfAbsent && writes.Add(1) <= 2 {
			both.Done()
			both.Wait()
		}
		return nil
	})
	type result struct {
		l   *objstore.Lease
		err error
	}
	results := make(chan result, 2)
	for _, host := range []string{"a", "b"} {
		go func() {
			l, err := objstore.Acquire(ctx, b, "l", objstore.Holder{Host: host}, ttl, 0)
			results <- result{l, err}
		}()
	}
	held := 0
	for range 2 {
		r := <-results
		switch {
		case r.err == nil:
			held++
			defer r.l.Release(ctx) //nolint:errcheck
		case !errors.Is(r.err, objstore.ErrHeld):
			t.Fatalf("takeover: %v", r.err)
		}
	}
	if held != 1 {
		t.Fatalf("%d hosts hold the lease after taking it over at once, want 1", held)
	}
}

// Rule 1: a holder whose renewals fail (the bucket answers errors) keeps
// the lease until half its TTL has passed without one, then loses it,
// while the lease is still live for everyone else: the holder stops
// before another can take the lease over.
func TestLeaseLostWhenRenewalsFail(t *testing.T) {
	ctx := context.Background()
	b := memstore.New(objstore.Config{})
	const ttl = 2 * time.Second
	l, err := objstore.Acquire(ctx, b, "l", objstore.Holder{Host: "a"}, ttl, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx) //nolint:errcheck
	b.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpPut {
			return errors.New("injected: 503 Service Unavailable")
		}
		return nil
	})
	b.Advance(ttl / 5)
	b.Advance(ttl / 5) // taken once the first failed renewal is done
	select {
	case <-l.Lost():
		t.Fatal("lost after one failed renewal, within half the TTL")
	default:
	}
	b.Advance(ttl / 5) // the second failed renewal is done; this one is past TTL/2
	waitLost(t, l, "renewals failing for half the TTL")
	b.SetHook(nil)
	if _, err := objstore.Acquire(ctx, b, "l", objstore.Holder{Host: "b"}, ttl, 0); !errors.Is(err, objstore.ErrHeld) {
		t.Fatalf("another host took the lease as its holder gave it up: %v", err)
	}
}
