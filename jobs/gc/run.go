package gc

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
	"golang.org/x/sync/semaphore"
)

// KindName is the job kind's name, also the name of its job lock.
const KindName = "gc"

// Report states.
const (
	StateRunning   = "running"
	StateOK        = "ok"
	StateFailed    = "failed"
	StateCancelled = "cancelled"
)

// MaxWorkers bounds either phase's worker pool.
const MaxWorkers = 64

// gcRun is one GC's state.
type gcRun struct {
	s    *store.Store
	col  store.ChunkCollector
	opt  Options
	mc   markCounts
	open openSet
	// inflight holds maxMarkEntries: an open index takes its entries
	inflight *semaphore.Weighted

	rep Report
}

func newRun(s *store.Store, opt Options) *gcRun { return &gcRun{s: s, opt: opt} }

func cpus() int { return runtime.GOMAXPROCS(0) }

func (r *gcRun) markWorkers() int {
	if r.opt.MarkWorkers > 0 {
		return min(r.opt.MarkWorkers, MaxWorkers)
	}
	// touches and stats wait in the file system (its journal, inode
	// locks) more than they use a CPU: 16 workers on 2 CPUs mark and
	// sweep a 1M-chunk store about 40% faster than 4 (BenchmarkGCWorkers)
	return min(max(8*cpus(), 8), 32)
}

func (r *gcRun) sweepWorkers() int {
	if r.opt.SweepWorkers > 0 {
		return min(r.opt.SweepWorkers, MaxWorkers)
	}
	return min(max(8*cpus(), 8), 32) // as markWorkers
}

func (r *gcRun) cacheEntries() int {
	if r.opt.CacheEntries > 0 {
		return r.opt.CacheEntries
	}
	return DefaultCacheEntries
}

// logf writes a line to the job's log (Observer) or the logger.
func (r *gcRun) logf(format string, args ...any) {
	if r.opt.Observer != nil {
		r.opt.Observer.Logf(format, args...)
		return
	}
	if r.opt.Logger != nil {
		r.opt.Logger.Info(fmt.Sprintf(format, args...))
	}
}

func (r *gcRun) setPhase(p string) {
	if r.opt.Observer != nil {
		r.opt.Observer.SetPhase(p)
	}
}

// run collects, then saves the report whatever the outcome.
func (r *gcRun) run(ctx context.Context) (Report, error) {
	r.rep = Report{UPID: r.opt.UPID, State: StateRunning, Started: time.Now(),
		AtimeCutoffSeconds: r.opt.AtimeCutoff.Seconds()}
	err := r.collect(ctx)
	r.finish(ctx, err)
	if serr := saveStatus(r.s, r.rep); serr != nil {
		r.logf("warning: saving the GC status: %v", serr)
		if err == nil {
			err = fmt.Errorf("gc: %w", serr)
		}
	}
	r.setPhase("done")
	return r.rep, err
}

// collect begins the store's collection (the atime check of a local
// store, the GC lease of a remote one) and runs both phases.
func (r *gcRun) collect(ctx context.Context) error {
	if n, err := r.s.CleanTrash(ctx); err != nil {
		r.logf("warning: removing what killed forgets left: %v", err)
	} else if r.rep.TrashRemoved = n; n > 0 {
		r.logf("removed %d snapshot director(y/ies) killed forgets left", n)
	}
	col := r.opt.collector
	if col == nil {
		col = r.s.ChunkCollector()
	}
	r.col = col
	defer func() {
		if err := col.Close(); err != nil {
			r.logf("warning: ending the collection: %v", err)
		}
	}()
	st, err := col.Begin(ctx, r.opt.AtimeCutoff)
	if err != nil {
		return fmt.Errorf("gc: %w; nothing was removed", err)
	}
	r.rep.Phase1Start, r.rep.Cutoff = st.Phase1, st.Cutoff
	r.mc.indexFiles.Add(st.IndexFiles)
	if !st.OldestWriter.IsZero() {
		w := st.OldestWriter
		r.rep.OldestWriter = &w
		r.logf("oldest running writer started %s", w.UTC().Format(time.RFC3339))
	}
	r.logf("%s; phase 1 starts %s; chunks not used since %s are removed (atime cutoff %s)",
		st.Note, st.Phase1.UTC().Format(time.RFC3339), st.Cutoff.UTC().Format(time.RFC3339), r.opt.AtimeCutoff)

	r.setPhase("mark")
	t := time.Now()
	err = r.mark(ctx)
	r.rep.Phase1Seconds = time.Since(t).Seconds()
	if err != nil && ctx.Err() == nil && !errors.Is(err, ErrBadIndex) {
		err = fmt.Errorf("%w: %w", ErrBadIndex, err)
	}
	if err == nil {
		err = col.EndMark(ctx)
	}
	r.markReport()
	if err != nil {
		return fmt.Errorf("gc phase 1: %w", err)
	}
	r.logf("phase 1 done: %d index files, %d chunk references, %d chunks touched, %d missing, in %s",
		r.rep.IndexFileCount, r.rep.ChunkRefs, r.rep.ChunksTouched, r.rep.MissingChunks, secs(r.rep.Phase1Seconds))

	r.setPhase("sweep")
	if r.opt.Observer != nil {
		r.opt.Observer.SetTotals(r.rep.IndexFileCount+store.PrefixDirs, 0)
	}
	t = time.Now()
	err = r.sweep(ctx)
	r.rep.Phase2Seconds = time.Since(t).Seconds()
	if err != nil {
		return fmt.Errorf("gc phase 2: %w", err)
	}
	return nil
}

func (r *gcRun) markReport() {
	r.rep.IndexFileCount = r.mc.indexFiles.Load()
	r.rep.IndexDataBytes = r.mc.indexBytes.Load()
	r.rep.ChunkRefs = r.mc.refs.Load()
	r.rep.ChunksTouched = r.mc.touched.Load()
	r.rep.MissingChunks = r.mc.missing.Load()
	if n := r.rep.MissingChunks - maxMissingLogged; n > 0 {
		r.logf("warning: %d more missing chunks not named", n)
	}
}

// finish sets the report's end, state and summary, and logs it.
func (r *gcRun) finish(ctx context.Context, err error) {
	rep := &r.rep
	rep.Ended = time.Now()
	rep.DedupFactor = 1
	if rep.DiskBytes > 0 {
		rep.DedupFactor = float64(rep.IndexDataBytes) / float64(rep.DiskBytes)
	}
	switch {
	case ctx.Err() != nil:
		rep.State, rep.Error = StateCancelled, ctx.Err().Error()
	case err != nil:
		rep.State, rep.Error = StateFailed, err.Error()
	default:
		rep.State = StateOK
	}
	if rep.Phase2Seconds == 0 {
		return
	}
	r.logf("phase 2 done: %d files in %s; removed %d chunks, %d bad, %d temporary (%s); pending %d chunks (%s); kept %d chunks, %s on disk; deduplication factor %.2f",
		rep.ChunkFiles, secs(rep.Phase2Seconds), rep.RemovedChunks, rep.RemovedBad, rep.RemovedTemp, humanize.IBytes(uint64(rep.RemovedBytes)),
		rep.PendingChunks, humanize.IBytes(uint64(rep.PendingBytes)), rep.DiskChunks, humanize.IBytes(uint64(rep.DiskBytes)), rep.DedupFactor)
}

func secs(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}
