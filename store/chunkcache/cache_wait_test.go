package chunkcache

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

// gateLoader is a Source whose loads wait for release and then
// return blob, or panic when blob is nil.
type gateLoader struct {
	started chan struct{}
	release chan struct{}
	blob    []byte
}

func (g *gateLoader) ReadBlob(ctx context.Context, d chunk.Digest, _ []byte, _ bool) (Blob, error) {
	g.started <- struct{}{}
	<-g.release
	if g.blob == nil {
		panic("decoder bug")
	}
	return &memBlob{data: g.blob}, nil
}

// getAll starts n Gets of d (sizes from sizes, in turn) that collapse into
// one load, lets the load finish and returns their errors.
func getAll(t *testing.T, g *gateLoader, d chunk.Digest, sizes ...int) []error {
	t.Helper()
	c, err := New(g, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	errs := make([]error, len(sizes))
	var wg sync.WaitGroup
	for i, size := range sizes {
		wg.Go(func() { _, errs[i] = c.Get(context.Background(), d, size) })
		if i == 0 {
			<-g.started // the first Get's load is in flight; the others join it
		}
	}
	for c.Stats.Misses.Load() < int64(len(sizes)) { // all asked (a late one may load again)
		time.Sleep(time.Millisecond)
	}
	close(g.release)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("waiters of the load not released in 5 s")
	}
	return errs
}

// TestCacheCollapsedLoadPanics: a load that panics releases every waiter
// with an error and the process lives on.
func TestCacheCollapsedLoadPanics(t *testing.T) {
	g := &gateLoader{started: make(chan struct{}, 1), release: make(chan struct{})}
	for i, err := range getAll(t, g, chunk.Sum([]byte("x")), 4096, 4096, 4096) {
		if !errors.Is(err, errLoadPanic) {
			t.Errorf("Get %d: %v, want the load's panic as an error", i, err)
		}
	}
}

// TestCacheCollapsedSizes: Gets of one chunk with two sizes that share a
// load each check the size they asked for.
func TestCacheCollapsedSizes(t *testing.T) {
	data := []byte("a chunk of twenty-six b.\n")
	blob, err := chunk.EncodeBlob(nil, data, false)
	if err != nil {
		t.Fatal(err)
	}
	g := &gateLoader{started: make(chan struct{}, 1), release: make(chan struct{}), blob: blob}
	errs := getAll(t, g, chunk.Sum(data), len(data), len(data)+1, len(data)-1)
	if errs[0] != nil {
		t.Errorf("Get of the right size: %v", errs[0])
	}
	for i, err := range errs[1:] {
		if !errors.Is(err, ErrSizeMismatch) {
			t.Errorf("Get %d of a wrong size: %v, want ErrSizeMismatch", i+1, err)
		}
	}
}

// TestCacheWaitCancelled: a Get waiting on a load that does not end
// returns when its context ends.
func TestCacheWaitCancelled(t *testing.T) {
	g := &gateLoader{started: make(chan struct{}, 1), release: make(chan struct{})}
	c, err := New(g, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Get(ctx, chunk.Sum([]byte("y")), 4096); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get: %v, want the context's error", err)
	}
	close(g.release) // the load ends (with a panic turned into an error)
	c.Close()
}
