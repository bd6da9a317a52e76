package gc_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestGCRacesBackups starts a GC with cutoff 0 at a random moment of
// every round, beside three backups and the forgetting of older
// snapshots, on a store whose every chunk file was aged an hour first
// (so that whatever phase 1 does not mark and no writer touches is
// removed). The backups are
//   - vm/same: an image whose chunks mostly all come from the previous
//     snapshot, taken as present without a read (KnownSet);
//   - vm/cycle: an image cycling through three contents, whose chunks
//     are garbage of forgotten snapshots when they come back (found by a
//     stat, or removed meanwhile and written again);
//   - host/tree: a file archive in metadata mode, whose unchanged files'
//     payload chunks are reused in runs without a read.
//
// After every round every finished snapshot's chunks are read and their
// digests checked; at the end the verify job passes every snapshot.
// 10 rounds with -short, 20 without (CI, under -race: about 12 CPU-s);
// the interleavings that break each rule are forced deterministically
// by the tests named in docs/design/store.md, so this one is the soak:
// CAIRN_GC_RACE_ROUNDS=N runs N (500 take about 150 s without -race).
func TestGCRacesBackups(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 10
	}
	if n, err := strconv.Atoi(os.Getenv("CAIRN_GC_RACE_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	r := newRace(t)
	for i := range rounds {
		r.round(t, i)
		checkSnapshots(t, r.s, i)
	}
	t.Logf("%d rounds: %d GC runs removed %d chunks in all; %d forgets, %d refused as locked",
		rounds, r.gcRuns, r.removed, r.forgotten, r.locked)
	if r.removed == 0 || r.forgotten == 0 {
		t.Fatalf("the rounds removed nothing (%d chunks, %d snapshots forgotten): the test exercises nothing", r.removed, r.forgotten)
	}
	runVerify(t, r.s)
}

var (
	same  = store.Group{Type: store.TypeVM, ID: "same"}
	cycle = store.Group{Type: store.TypeVM, ID: "cycle"}
	tree  = store.Group{Type: store.TypeHost, ID: "tree"}
)

const raceChunk = 64 << 10

type race struct {
	s      *store.Store
	rng    *rand.Rand
	start  time.Time // snapshot time of round 0
	img    string    // directory of the image files
	src    string    // source tree of host/tree
	base   []byte    // vm/same's content
	cycles [3][]byte // vm/cycle's contents

	gcRuns, removed   int64
	forgotten, locked int
}

func newRace(t *testing.T) *race {
	r := &race{s: storetest.NewStore(t), rng: rand.New(rand.NewPCG(13, 13)),
		start: time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Second),
		img:   t.TempDir(), src: t.TempDir()}
	r.base = storetest.RandBytes("same", 8*raceChunk)
	clear(r.base[6*raceChunk:]) // two zero chunks
	for v := range r.cycles {
		r.cycles[v] = storetest.RandBytes(fmt.Sprint("cycle", v), 6*raceChunk+100)
	}
	for i := range 24 {
		writeFile(t, filepath.Join(r.src, fmt.Sprintf("d%d/f%02d", i%3, i)), storetest.RandSeeded(20000+i*100, uint64(i)))
	}
	return r
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// round changes the sources, ages every chunk file, then runs the three
// backups, the forgets and a GC at random moments, all at once.
func (r *race) round(t *testing.T, i int) {
	if i%5 == 4 { // vm/same changes one chunk; other rounds reuse all
		r.base[r.rng.IntN(6*raceChunk)]++
	}
	n := r.rng.IntN(24)
	writeFile(t, filepath.Join(r.src, fmt.Sprintf("d%d/f%02d", n%3, n)), storetest.RandSeeded(20000+n*100, uint64(1000+i)))
	storetest.AgeAllChunks(t, r.s, time.Hour)
	at := r.start.Add(time.Duration(i) * time.Minute)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	delayed := func(fn func() error) {
		d := time.Duration(r.rng.IntN(30)) * time.Millisecond
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(d)
			if err := fn(); err != nil {
				errs <- err
			}
		}()
	}
	delayed(func() error { return r.backupImage(ctx, same, at, r.base) })
	delayed(func() error { return r.backupImage(ctx, cycle, at, r.cycles[i%3]) })
	delayed(func() error { return r.backupTree(ctx, at) })
	all := r.rng.IntN(4) == 0
	delayed(func() error { return r.forget(ctx, all) })
	delayed(func() error { return r.gc(ctx) })
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("round %d: %v", i, err)
	}
}

func (r *race) backupImage(ctx context.Context, g store.Group, at time.Time, data []byte) error {
	return backupImageIn(ctx, r.s, r.img, g, at, data)
}

// backupImageIn backs data up as g's image at at into s, through a file
// in dir.
func backupImageIn(ctx context.Context, s *store.Store, dir string, g store.Group, at time.Time, data []byte) error {
	path := filepath.Join(dir, g.ID)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := s.StartBackup(ctx, g, at)
	if err != nil {
		return err
	}
	b.Sync = store.SyncNone
	if err := b.AddImage(ctx, "disk.img", f, store.ImageOptions{ChunkSize: raceChunk, Workers: 2}); err != nil {
		b.Abort()
		return err
	}
	return b.Finish()
}

func (r *race) backupTree(ctx context.Context, at time.Time) error {
	b, err := r.s.StartBackup(ctx, tree, at)
	if err != nil {
		return err
	}
	b.Sync = store.SyncNone
	opt := filearchive.Options{ChunkSize: raceChunk, Workers: 2, MaxPadding: -1,
		OnError: func(p string, err error) {}}
	if _, err := filearchive.AddArchive(ctx, b, "root.pxar", r.src, opt); err != nil {
		b.Abort()
		return err
	}
	return b.Finish()
}

// forget removes every finished snapshot but the newest two of each
// group, and the newest too when all is set: that one is refused while
// a backup builds on it.
func (r *race) forget(ctx context.Context, all bool) error {
	for _, g := range []store.Group{same, cycle, tree} {
		infos, err := r.s.Snapshots(g)
		if errors.Is(err, store.ErrNotFound) {
			continue // no backup of the group yet
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
		keep := 2
		if all {
			keep = 0
		}
		for _, snap := range done[:max(len(done)-keep, 0)] {
			err := r.s.ForgetSnapshot(ctx, snap)
			switch {
			case errors.Is(err, store.ErrLocked):
				r.locked++
			case err != nil:
				return err
			default:
				r.forgotten++
			}
		}
	}
	return nil
}

func (r *race) gc(ctx context.Context) error {
	rep, err := gc.Run(ctx, r.s, gc.Options{AtimeCutoff: 0})
	if err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	r.gcRuns++
	r.removed += rep.RemovedChunks
	return nil
}

// checkSnapshots reads every chunk of every finished snapshot, checking
// its digest and size against the index (checked against the manifest).
func checkSnapshots(t *testing.T, s *store.Store, round int) {
	t.Helper()
	ctx := context.Background()
	var dec []byte
	for si, err := range s.Walk(ctx, store.Selector{}) {
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !si.Finished {
			continue
		}
		m, err := s.ReadManifest(si.Snapshot)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, f := range m.Files {
			if filepath.Ext(f.Filename) == ".blob" {
				continue
			}
			x, err := s.OpenSnapshotIndex(si.Snapshot, m, f.Filename)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			for i := range x.Len() {
				d, start, end := x.Chunk(i)
				blob, err := s.ReadChunk(ctx, d, store.ChunkOptions{})
				if err == nil {
					_, err = chunk.DecodeChunkReuse(&dec, blob.Bytes(), d, int(end-start))
				}
				if err != nil {
					x.Close()
					t.Fatalf("round %d: snapshot %s, %s chunk %d: %v", round, si.Snapshot, f.Filename, i, err)
				}
			}
			x.Close()
		}
	}
}

// runVerify runs the verify job over the whole store: every snapshot
// must pass.
func runVerify(t *testing.T, s *store.Store) {
	t.Helper()
	m := jobs.NewManager(context.Background(), s, nil)
	t.Cleanup(m.Close)
	if err := m.Register(verify.Kind{Sysfs: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	j, err := m.Start("verify", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Wait(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	rep, ok := st.Result.(verify.Report)
	if !ok {
		t.Fatalf("verify result is %T", st.Result)
	}
	if len(rep.Snapshots) == 0 {
		t.Fatal("verify saw no snapshot")
	}
	for _, r := range rep.Snapshots {
		if r.State != "ok" {
			t.Errorf("verify %s: %+v", r.Snapshot, r)
		}
	}
}
