package storesync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/s3store"
)

// MaxWorkers bounds the chunk workers of one sync.
const MaxWorkers = 64

// ErrSameStore refuses a sync of a store into itself.
var ErrSameStore = errors.New("source and target are the same store")

// Options say what a sync copies.
type Options struct {
	// NS selects every group of the namespace and of those below it,
	// unless Group or Snapshot is set (then it is where they are).
	NS store.NS
	// Group selects one group's snapshots.
	Group *store.Group
	// Snapshot selects one snapshot (a time or latest).
	Snapshot *store.Ref
	// RemoveVanished removes the target's snapshots of the selected
	// groups that the source no longer has (not with Snapshot).
	RemoveVanished bool
	// Workers copy chunks (0: the number of CPUs, at least 4, or as
	// many as a remote store wants requests in flight).
	Workers int
}

// Check validates the options.
func (o Options) Check() error {
	if err := o.NS.Check(); err != nil {
		return err
	}
	switch {
	case o.Group != nil && o.Snapshot != nil:
		return errors.New("give a group or a snapshot, not both")
	case o.Group != nil:
		if err := o.Group.Check(); err != nil {
			return err
		}
	case o.Snapshot != nil:
		if err := o.Snapshot.Group.Check(); err != nil {
			return err
		}
		if o.RemoveVanished {
			return errors.New("remove-vanished works on groups or namespaces, not on one snapshot")
		}
	}
	if o.Workers < 0 || o.Workers > MaxWorkers {
		return fmt.Errorf("workers %d: want 0 to %d", o.Workers, MaxWorkers)
	}
	return nil
}

// Observer is told what a sync does (a *jobs.Job is one).
type Observer interface {
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	AddDone(items, bytes int64)
}

// Syncer copies snapshots from one store to another.
type Syncer struct {
	from, to *store.Store
	opt      Options
	obs      Observer

	// lookFirst: a chunk is looked up in the target before it is read
	// from the source (see chunkWorker.copy).
	lookFirst bool

	chunksCopied, chunksReused, bytesCopied, dataBytes atomic.Int64

	// beforeFinish, when set (by tests), runs before a copy's manifest
	// is written.
	beforeFinish func(store.Snapshot)

	// uploading is held by the snapshot that copies chunks (pipeline.go)
	uploading chan struct{}

	mu  sync.Mutex
	rep Report
}

// New returns a Syncer from one store to another; obs may be nil.
func New(from, to *store.Store, opt Options, obs Observer) (*Syncer, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if same, err := sameStore(from, to); err != nil || same {
		if err == nil {
			err = fmt.Errorf("%w: %s", ErrSameStore, to.Root())
		}
		return nil, err
	}
	if opt.Workers == 0 {
		opt.Workers = min(max(runtime.NumCPU(), 4, from.IOParallelism(), to.IOParallelism()), MaxWorkers)
	}
	if obs == nil {
		obs = discard{}
	}
	return &Syncer{from: from, to: to, opt: opt, obs: obs, uploading: make(chan struct{}, 1),
		lookFirst: to.IOParallelism() == 0 || from.IOParallelism() > 0,
		rep:       Report{From: from.Root(), To: to.Root(), Snapshots: []SnapshotResult{}}}, nil
}

// sameStore tells whether two stores are one: one directory, or two
// directories of one bucket and prefix (two hosts of a remote store).
func sameStore(a, b *store.Store) (bool, error) {
	ra, remoteA := s3store.InfoOf(a)
	rb, remoteB := s3store.InfoOf(b)
	if remoteA && remoteB && ra.Endpoint == rb.Endpoint && ra.Bucket == rb.Bucket && ra.Prefix == rb.Prefix {
		return true, nil
	}
	fa, err := os.Stat(a.Root())
	if err != nil {
		return false, fmt.Errorf("source store: %w", err)
	}
	fb, err := os.Stat(b.Root())
	if err != nil {
		return false, fmt.Errorf("target store: %w", err)
	}
	return os.SameFile(fa, fb), nil
}

// Report returns the counts so far (the final ones once Run returned).
func (s *Syncer) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rep.clone()
	r.ChunksCopied, r.ChunksReused = s.chunksCopied.Load(), s.chunksReused.Load()
	r.BytesCopied, r.DataBytes = s.bytesCopied.Load(), s.dataBytes.Load()
	return r
}

func (s *Syncer) record(res SnapshotResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.add(res)
}

// Run copies the selected snapshots, then removes vanished ones when
// asked. Errors of single snapshots and groups go to the Observer (and
// the report); the error returned is one that ended the sync early.
func (s *Syncer) Run(ctx context.Context) error {
	start := time.Now()
	defer func() {
		s.mu.Lock()
		s.rep.Seconds = time.Since(start).Seconds()
		s.mu.Unlock()
	}()
	whole, err := s.refresh(ctx)
	if err != nil {
		return err
	}
	plan, complete, err := s.plan(ctx)
	if err != nil {
		return err
	}
	complete = complete && whole
	if t, ok := s.obs.(interface{ SetTotals(items, bytes int64) }); ok {
		n := 0
		for _, gp := range plan {
			n += len(gp.snaps)
		}
		t.SetTotals(int64(n), 0)
	}
	s.syncGroups(ctx, plan)
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.opt.RemoveVanished {
		return nil
	}
	if !complete {
		s.obs.Errorf("vanished snapshots not removed: the source could not be listed whole")
		return nil
	}
	return s.removeVanished(ctx, plan)
}

// refresh brings both stores' snapshot lists up to date (a remote
// store's mirror of its bucket; nothing for a local one). whole is false
// when keys of the source were refused: its listing is not complete.
func (s *Syncer) refresh(ctx context.Context) (whole bool, err error) {
	whole = true
	for _, st := range []struct {
		name string
		s    *store.Store
	}{{"source", s.from}, {"target", s.to}} {
		err := st.s.Refresh(ctx)
		var partial *s3store.RefreshError
		switch {
		case errors.As(err, &partial):
			s.obs.Errorf("%s: %v", st.name, err)
			whole = whole && st.s != s.from
		case err != nil:
			return false, fmt.Errorf("%s: %w", st.name, err)
		}
	}
	return whole, nil
}

type discard struct{}

func (discard) Logf(string, ...any)   {}
func (discard) Errorf(string, ...any) {}
func (discard) AddDone(int64, int64)  {}
