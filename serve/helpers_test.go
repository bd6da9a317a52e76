package serve

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/serve/runlog"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// every is a schedule due at each multiple of d (since the Unix epoch).
type every struct{ d time.Duration }

func (e every) Next(after time.Time) time.Time { return after.Truncate(e.d).Add(e.d) }
func (e every) Missed(last, now time.Time) bool {
	return !e.Next(last).After(now)
}

// once is a schedule due once, delay after the first time it is asked
// (when the daemon takes its configuration, however late that is).
type once struct {
	delay time.Duration
	mu    sync.Mutex
	at    time.Time
}

func after(d time.Duration) *once { return &once{delay: d} }

func (o *once) Next(after time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.at.IsZero() {
		o.at = after.Add(o.delay)
	}
	if after.Before(o.at) {
		return o.at
	}
	return time.Time{}
}

func (o *once) Missed(last, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.at.IsZero() && last.Before(o.at) && !o.at.After(now)
}

// When is the time it is due (zero before it was asked).
func (o *once) When() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.at
}

// events is a Notifier that keeps every event and hands them on a
// channel as they come.
type events struct {
	mu  sync.Mutex
	all []runlog.Event
	ch  chan runlog.Event
}

func newEvents() *events { return &events{ch: make(chan runlog.Event, 1000)} }

func (e *events) Notify(ev runlog.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
	e.ch <- ev
}

// wait returns the next event for which match is true, failing the test
// when ctx ends first.
func (e *events) wait(t *testing.T, ctx context.Context, match func(runlog.Event) bool) runlog.Event {
	t.Helper()
	for {
		select {
		case ev := <-e.ch:
			if match(ev) {
				return ev
			}
		case <-ctx.Done():
			t.Fatalf("event not seen: %v", ctx.Err())
		}
	}
}

// count is the number of events of kind about job (any job: "").
func (e *events) count(kind runlog.EventKind, job string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.Kind == kind && (job == "" || ev.Run != nil && ev.Run.Job == job) {
			n++
		}
	}
	return n
}

func isEvent(kind runlog.EventKind, job string) func(runlog.Event) bool {
	return func(ev runlog.Event) bool { return ev.Kind == kind && ev.Run != nil && ev.Run.Job == job }
}

// testStore is a store with one image snapshot of vm/100.
func testStore(t *testing.T) (*store.Store, store.Snapshot) {
	s := storetest.NewStore(t)
	snap := storetest.BackupImage(t, s, store.Group{Type: store.TypeVM, ID: "100"}, time.Now().Add(-time.Hour),
		storetest.Image{Data: storetest.RandBytes("serve", 1<<20), ChunkSize: 64 << 10})
	return s, snap
}

// start runs a daemon of opt until the test ends (or stop is called);
// stop waits for Run to return and fails the test on its error.
func start(t *testing.T, opt Options) (d *Daemon, stop func()) {
	t.Helper()
	d, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var stopped atomic.Bool
	stop = func() {
		if stopped.Swap(true) {
			return
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(stop)
	return d, stop
}

// testCtx ends when the test's deadline is near.
func testCtx(t *testing.T) context.Context {
	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		c, cancel := context.WithDeadline(ctx, dl.Add(-5*time.Second))
		t.Cleanup(cancel)
		return c
	}
	return ctx
}

// corruptChunk overwrites the first chunk of snap's disk.img.
func corruptChunk(t *testing.T, s *store.Store, snap store.Snapshot) {
	d := storetest.ChunksOf(t, s, snap, "disk.img.fidx")[0]
	os.Remove(s.ChunkPath(d))
	if err := os.WriteFile(s.ChunkPath(d), []byte("not a chunk"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runsOf returns the recorded runs of job, newest first.
func runsOf(st runlog.Status, job string) []runlog.Run {
	var out []runlog.Run
	for _, r := range st.Runs {
		if r.Job == job {
			out = append(out, r)
		}
	}
	return out
}
