package gc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestRemoteGCRacesBackups is TestGCRacesBackups on one bucket from two
// hosts, in short: two store directories attached to one bucket (two
// hosts) back up one group each, vm/same from the first (an image whose
// chunks mostly come from its previous snapshot: reused without a
// request) and vm/cycle from the second (three contents in turn: its
// chunks are garbage of forgotten snapshots when they come back, found
// by HEAD and touched), while older snapshots are forgotten and a GC with
// cutoff 0 runs from either host, started at once in even rounds (so
// that it sweeps while the backups revive old chunks) and at a random
// moment in odd ones. After every round a fresh store directory (no
// cache) reads every chunk of every snapshot; at the end verify passes
// them all. 6 rounds, 4 with -short; CAIRN_GC_REMOTE_RACE_ROUNDS=N runs N.
func TestRemoteGCRacesBackups(t *testing.T) {
	rounds := 6
	if testing.Short() {
		rounds = 4
	}
	if n, err := strconv.Atoi(os.Getenv("CAIRN_GC_REMOTE_RACE_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	srv := miniotest.Start(t)
	a, cfg := storetest.NewRemoteStoreOn(t, srv, s3store.Config{})
	r := &remoteRace{cfg: cfg, b: gc.OpenBucket(t, cfg), hosts: [2]*store.Store{a, storetest.AttachRemoteStore(t, cfg)}, race: newRace(t)}
	for i := range rounds {
		r.round(t, i, i == rounds-1)
		fresh := storetest.AttachRemoteStore(t, cfg)
		checkSnapshots(t, fresh, i)
		fresh.Close()
	}
	t.Logf("%d rounds: %d GC runs removed %d chunks in all (%d found missing: uploads under way); %d forgets, %d refused",
		rounds, r.gcRuns, r.removed, r.missing, r.forgotten, r.refused)
	if r.removed == 0 || r.forgotten == 0 {
		t.Fatalf("the rounds removed nothing (%d chunks, %d snapshots forgotten): the test exercises nothing", r.removed, r.forgotten)
	}
	runVerify(t, storetest.AttachRemoteStore(t, cfg))
}

type remoteRace struct {
	cfg   s3store.Config
	b     *objstore.Bucket
	hosts [2]*store.Store
	race  *race // the sources and their changes

	mu                 sync.Mutex
	gcRuns, removed    int64
	missing            int64
	forgotten, refused int
}

func (r *remoteRace) round(t *testing.T, i int, last bool) {
	src := r.race
	if i%5 == 4 {
		src.base[src.rng.IntN(6*raceChunk)]++
	}
	// LastModified has whole seconds: what the last round wrote is older
	// than this round's GC
	time.Sleep(1100 * time.Millisecond)
	at := src.start.Add(time.Duration(i) * time.Minute)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	delayed := func(d time.Duration, fn func() error) {
		wg.Go(func() {
			time.Sleep(d)
			if err := fn(); err != nil {
				errs <- err
			}
		})
	}
	jitter := func() time.Duration { return time.Duration(src.rng.IntN(300)) * time.Millisecond }
	host := r.hosts[i%2]
	all := src.rng.IntN(3) == 0 && !last // verify wants snapshots at the end
	backups := func() {
		delayed(jitter(), func() error { return backupImageIn(ctx, r.hosts[0], src.img, same, at, src.base) })
		delayed(jitter(), func() error { return backupImageIn(ctx, r.hosts[1], src.img, cycle, at, src.cycles[i%3]) })
	}
	if i%2 == 1 {
		backups()
		delayed(jitter(), func() error { return r.forget(ctx, host, all) })
		delayed(jitter(), func() error { return r.gc(ctx, r.hosts[(i+1)%2]) })
	} else {
		// the forget first, then the backups once the GC sweeps (or
		// ended): it listed no writer, so it deletes what the backups
		// find old and revive
		if err := r.forget(ctx, host, all); err != nil {
			t.Fatal(err)
		}
		gcDone := make(chan struct{})
		delayed(0, func() error { defer close(gcDone); return r.gc(ctx, r.hosts[(i+1)%2]) })
		r.waitSweep(t, gcDone)
		backups()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("round %d: %v", i, err)
	}
}

// forget removes every finished snapshot of both groups but the newest
// (all: none kept; the newest is refused while a backup builds on it).
func (r *remoteRace) forget(ctx context.Context, s *store.Store, all bool) error {
	if err := s.Refresh(ctx); err != nil {
		return err
	}
	for _, g := range []store.Group{same, cycle} {
		infos, err := s.Snapshots(g)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		var done []store.Snapshot
		for _, si := range infos {
			if si.Finished {
				done = append(done, si.Snapshot)
			}
		}
		keep := 1
		if all {
			keep = 0
		}
		for _, snap := range done[:max(len(done)-keep, 0)] {
			err := s.ForgetSnapshot(ctx, snap)
			r.mu.Lock()
			switch {
			case errors.Is(err, store.ErrLocked) || errors.Is(err, store.ErrSnapshotInUse) || errors.Is(err, store.ErrNotFound):
				r.refused++
				err = nil
			case err == nil:
				r.forgotten++
			}
			r.mu.Unlock()
			if err != nil {
				return fmt.Errorf("forget %s: %w", snap, err)
			}
		}
	}
	return nil
}

func (r *remoteRace) gc(ctx context.Context, s *store.Store) error {
	rep, err := gc.Run(ctx, s, gc.Options{AtimeCutoff: 0})
	if err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	r.mu.Lock()
	r.gcRuns++
	r.removed += rep.RemovedChunks
	// a backup of this host under way has indexes in its directory whose
	// chunks are still being uploaded: the GC counts them missing, which
	// costs nothing; what every round checks is that the finished
	// snapshots read back whole
	r.missing += rep.MissingChunks
	r.mu.Unlock()
	return nil
}

// waitSweep waits until the bucket's GC lease says the GC sweeps, or the
// GC ended.
func (r *remoteRace) waitSweep(t *testing.T, done <-chan struct{}) {
	t.Helper()
	for {
		select {
		case <-done:
			return
		case <-time.After(5 * time.Millisecond):
		}
		leases, err := r.b.Leases(context.Background(), ".cairn/leases/gc")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leases {
			if s3store.ParseGCPhase(l.Holder.Data) == s3store.GCPhaseSweep {
				return
			}
		}
	}
}
