package memstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
)

// The S3 semantics the store relies on, and each lie.
func TestSemantics(t *testing.T) {
	ctx := context.Background()
	b := memstore.New(objstore.Config{})
	put := func(key string, cond objstore.Cond, data string) (objstore.ObjectInfo, error) {
		return b.Put(ctx, key, cond, []byte(data))
	}
	a, err := put("a/1", objstore.Cond{IfAbsent: true}, "one")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put("a/1", objstore.Cond{IfAbsent: true}, "x"); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("create over an object: %v", err)
	}
	if _, err := put("a/1", objstore.Cond{IfMatch: "nope"}, "x"); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("If-Match on another ETag: %v", err)
	}
	if _, err := put("a/2", objstore.Cond{IfMatch: a.ETag}, "x"); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("If-Match on a missing object: %v", err)
	}
	if _, err := put("a/1", objstore.Cond{IfMatch: a.ETag}, "two"); err != nil {
		t.Fatal(err)
	}
	if data, _, err := b.Get(ctx, "a/1", 10, nil); err != nil || string(data) != "two" {
		t.Fatalf("get: %q %v", data, err)
	}
	if _, _, err := b.Get(ctx, "a/1", 2, nil); !errors.Is(err, objstore.ErrTooLarge) {
		t.Fatalf("get over the limit: %v", err)
	}
	for _, k := range []string{"a/3", "b/1", "a/0"} {
		if _, err := put(k, objstore.Cond{}, k); err != nil {
			t.Fatal(err)
		}
	}
	list := func(prefix, after string) []string {
		var keys []string
		for o, err := range b.List(ctx, prefix, after) {
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, o.Key)
		}
		return keys
	}
	if got := list("a/", "a/0"); !slices.Equal(got, []string{"a/1", "a/3"}) {
		t.Fatalf("list after a/0: %v", got)
	}
	if dirs, err := b.ListDirs(ctx, ""); err != nil || !slices.Equal(dirs, []string{"a/", "b/"}) {
		t.Fatalf("dirs: %v %v", dirs, err)
	}
	before, _ := b.Head(ctx, "a/1")
	b.Advance(time.Minute)
	touched, err := b.Touch(ctx, "a/1")
	if err != nil || !touched.LastModified.After(before.LastModified) {
		t.Fatalf("touch: %v %v (was %v)", touched, err, before.LastModified)
	}
	if err := b.Delete(ctx, "a/0", "missing"); err != nil || b.Has("a/0") {
		t.Fatalf("delete: %v", err)
	}

	b.SetHook(func(_ context.Context, c *memstore.Call) error {
		switch {
		case c.Op == memstore.OpHead && c.Key == "ghost":
			c.Lie = memstore.LiePhantom
		case c.Op == memstore.OpPut && c.Key == "dropped":
			c.Lie = memstore.LieNotStored
		case c.Op == memstore.OpTouch && c.Key == "a/1":
			c.Lie = memstore.LieNoop
		case c.Op == memstore.OpListKey && c.Key == "a/1":
			c.Lie = memstore.LieOmit
		case c.Op == memstore.OpListKey && c.Key == "a/3":
			c.Lie = memstore.LieRepeat
		case c.Op == memstore.OpGet && c.Key == "b/1":
			return objstore.ErrAccessDenied
		}
		return nil
	})
	if _, err := b.Head(ctx, "ghost"); err != nil || b.Has("ghost") {
		t.Fatalf("phantom head: %v", err)
	}
	if _, err := put("dropped", objstore.Cond{}, "data"); !errors.Is(err, objstore.ErrBadAnswer) || b.Has("dropped") {
		t.Fatalf("put not stored: %v, held %v", err, b.Has("dropped"))
	}
	b.Advance(time.Minute)
	if _, err := b.Touch(ctx, "a/1"); !errors.Is(err, objstore.ErrBadAnswer) {
		t.Fatalf("touch not made: %v", err)
	}
	if got := list("a/", ""); !slices.Equal(got, []string{"a/3", "a/3"}) {
		t.Fatalf("lying list: %v", got)
	}
	if _, _, err := b.Get(ctx, "b/1", 10, nil); !errors.Is(err, objstore.ErrAccessDenied) {
		t.Fatalf("injected error: %v", err)
	}
}

// A hook blocks a call until the test lets it go: a pause point.
func TestPause(t *testing.T) {
	b := memstore.New(objstore.Config{})
	reached, release := make(chan struct{}), make(chan struct{})
	b.SetHook(func(ctx context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpPut {
			close(reached)
			<-release
		}
		return nil
	})
	done := make(chan error)
	go func() {
		_, err := b.Put(context.Background(), "k", objstore.Cond{}, []byte("v"))
		done <- err
	}()
	<-reached
	if b.Has("k") {
		t.Fatal("stored before the pause ended")
	}
	close(release)
	if err := <-done; err != nil || !b.Has("k") {
		t.Fatalf("after the pause: %v", err)
	}
}

// The leases' clock is the bucket's: Advance fires an After it reaches
// and hands a ticker's tick over before it returns; one it does not
// reach waits.
func TestLeaseClock(t *testing.T) {
	b := memstore.New(objstore.Config{})
	clk := objstore.LeaseClockOf(b)
	before := clk.Now()
	after := clk.After(time.Hour)
	tick, stop := clk.NewTicker(time.Hour)
	defer stop()
	got := make(chan time.Time)
	go func() { got <- <-tick }()
	b.Advance(30 * time.Minute)
	select {
	case <-after:
		t.Fatal("an After of an hour fired after half an hour")
	default:
	}
	b.Advance(30 * time.Minute) // returns once the tick is taken
	if now := <-got; now.Sub(before) < time.Hour {
		t.Fatalf("tick at %v, an hour after %v", now, before)
	}
	select {
	case <-after:
	default:
		t.Fatal("an After of an hour did not fire an hour on")
	}
	if d := clk.Now().Sub(before); d < time.Hour {
		t.Fatalf("the clock moved %v, want an hour", d)
	}
}
