package tape

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/cairnfs/cairn/store"
)

// MaxWorkers bounds ExportOptions.Workers (PBS: worker-threads 1–32).
const MaxWorkers = 32

// ExportOptions configure Export.
type ExportOptions struct {
	Pool        string
	PoolOptions media.PoolOptions
	NewSet      bool  // start a new media set
	Workers     int   // chunk reader goroutines, 1–32 (0: 1)
	MaxArchive  int64 // chunk archive size limit (0: 4 GiB)
	Reporter    Reporter
	Logger      *slog.Logger
}

// Snapshot states in reports.
const (
	StateDone    = "ok"      // exported or restored
	StatePresent = "present" // already on the media set / in the store
	StateFailed  = "failed"
	StateGone    = "gone" // export: removed from the store (forget, prune) before it was read
)

// SnapshotResult is one snapshot's outcome.
type SnapshotResult struct {
	Snapshot string `json:"snapshot"`
	State    string `json:"state"`
	Chunks   int64  `json:"chunks"` // export: chunks written for it; restore: chunks it references
	Bytes    int64  `json:"bytes"`
	Error    string `json:"error,omitempty"`
	// Encryption says how a restored encrypted snapshot's chunks were
	// checked: with its key (named by fingerprint) or without.
	Encryption string `json:"encryption,omitempty"`
	// Archives lists, when several snapshot archives on the media set
	// claim the snapshot, each of them and what became of it.
	Archives []ArchiveClaim `json:"archives,omitempty"`
}

// ExportReport is what Export did.
type ExportReport struct {
	MediaSet   string           `json:"media_set"`
	Tapes      []string         `json:"tapes"`
	Workers    int              `json:"worker_threads"`
	Snapshots  []SnapshotResult `json:"snapshots"`
	Chunks     int64            `json:"chunks"`
	Bytes      int64            `json:"bytes"`
	Duration   time.Duration    `json:"duration_ns"`
	WriterIdle time.Duration    `json:"writer_idle_ns"` // time the tape writer waited for chunks
}

// Failed counts the snapshots that were not exported.
func (r *ExportReport) Failed() int {
	n := 0
	for _, s := range r.Snapshots {
		if s.State == StateFailed {
			n++
		}
	}
	return n
}

type plannedSnapshot struct {
	name    string
	present bool           // already on the media set
	all     []chunk.Digest // every chunk it needs
	todo    []chunk.Digest // those this job writes for it
	err     error
}

// Export writes the snapshots (chunks first, then the snapshot archive)
// to the pool's media set on the drive. A chunk that cannot be read or is
// corrupt is reported and its snapshot is not exported; the job goes on.
// Errors of the tape itself end the job. The report is returned also
// with an error.
func Export(ctx context.Context, d *drive.Drive, src Source, snapshots []string, opt ExportOptions) (*ExportReport, error) {
	start := time.Now()
	rep, log := opt.Reporter, opt.Logger
	if rep == nil {
		rep = nopReporter{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opt.Workers == 0 {
		opt.Workers = 1
	}
	if opt.Workers < 1 || opt.Workers > MaxWorkers {
		return nil, fmt.Errorf("tape export: worker threads %d: want 1 to %d", opt.Workers, MaxWorkers)
	}
	pool, err := media.OpenPool(d, opt.Pool, opt.PoolOptions, log)
	if err != nil {
		return nil, err
	}
	w, err := pool.NewWriter(media.WriterOptions{NewSet: opt.NewSet, MaxArchiveSize: opt.MaxArchive,
		OnTape: func(label string) { rep.SetPhase("writing (tape " + label + ")") }})
	if err != nil {
		return nil, err
	}
	report := &ExportReport{MediaSet: w.MediaSet().UUID.String(), Workers: opt.Workers}
	rep.SetPhase("planning")
	plan := planExport(ctx, w, src, snapshots)
	items, bytes := planTotals(plan, src)
	rep.SetTotals(items, bytes)
	rep.SetPhase("writing")
	err = exportAll(ctx, w, src, plan, opt, rep, report)
	if cerr := w.Close(ctx); err == nil {
		err = cerr
	}
	st := w.Stats()
	report.Tapes, report.WriterIdle, report.Duration = st.Tapes, st.Wait, time.Since(start)
	return report, err
}

// planExport lists, per snapshot, its chunks and those to write: not on
// the media set and not planned for an earlier snapshot of this job.
func planExport(ctx context.Context, w *media.Writer, src Source, snapshots []string) []plannedSnapshot {
	sent := map[chunk.Digest]bool{}
	plan := make([]plannedSnapshot, 0, len(snapshots))
	for _, name := range snapshots {
		p := plannedSnapshot{name: name}
		if w.ContainsSnapshot(src.Name(), name) {
			p.present = true
			plan = append(plan, p)
			continue
		}
		p.all, p.err = src.Chunks(ctx, name)
		for _, d := range p.all {
			if !sent[d] && !w.ContainsChunk(src.Name(), d) {
				sent[d] = true
				p.todo = append(p.todo, d)
			}
		}
		if o, ok := src.(Orderer); ok && len(p.todo) > 1 {
			p.todo = o.OrderChunks(ctx, p.todo)
		}
		plan = append(plan, p)
	}
	return plan
}

// planTotals counts the chunks to write and, when the source can tell
// chunk sizes, their bytes (0: unknown).
func planTotals(plan []plannedSnapshot, src Source) (items, bytes int64) {
	sz, _ := src.(Sizer)
	for _, p := range plan {
		items += int64(len(p.todo))
		for _, d := range p.todo {
			if sz == nil {
				break
			}
			if n, ok := sz.ChunkSize(d); ok {
				bytes += n
			}
		}
	}
	return items, bytes
}

func exportAll(ctx context.Context, w *media.Writer, src Source, plan []plannedSnapshot, opt ExportOptions, rep Reporter, report *ExportReport) error {
	carry := map[chunk.Digest]bool{} // chunks planned for snapshots that were not read
	for _, p := range plan {
		if p.present {
			rep.Logf("snapshot %s: already on media set", p.name)
			report.Snapshots = append(report.Snapshots, SnapshotResult{Snapshot: p.name, State: StatePresent})
			continue
		}
		p.todo = takeCarried(carry, p)
		unlock, err := lockForExport(ctx, src, p.name)
		if err != nil {
			for _, d := range p.todo {
				carry[d] = true // a later snapshot that needs them writes them
			}
			res := SnapshotResult{Snapshot: p.name, State: StateGone}
			if errors.Is(err, store.ErrNotFound) {
				rep.Logf("snapshot %s: removed from the store before it was exported (forgotten or pruned)", p.name)
			} else {
				res.State, res.Error = StateFailed, err.Error()
				rep.Errorf("snapshot %s: %v", p.name, err)
			}
			report.Snapshots = append(report.Snapshots, res)
			continue
		}
		res, err := exportLocked(ctx, w, src, p, opt, rep, report)
		unlock()
		report.Snapshots = append(report.Snapshots, res)
		if err != nil {
			return err
		}
	}
	return nil
}

// takeCarried adds to p's chunks to write those it needs that were
// planned for a snapshot that was not read.
func takeCarried(carry map[chunk.Digest]bool, p plannedSnapshot) []chunk.Digest {
	if len(carry) == 0 {
		return p.todo
	}
	todo := p.todo
	for _, d := range p.all {
		if carry[d] {
			delete(carry, d)
			todo = append(todo, d)
		}
	}
	return todo
}

// lockForExport holds the snapshot while it is read, when the source can.
func lockForExport(ctx context.Context, src Source, name string) (func(), error) {
	l, ok := src.(Locker)
	if !ok {
		return func() {}, nil
	}
	return l.LockSnapshot(ctx, name)
}

// exportLocked writes one snapshot, held locked: its chunks, then its
// archive. An error ends the export.
func exportLocked(ctx context.Context, w *media.Writer, src Source, p plannedSnapshot, opt ExportOptions, rep Reporter, report *ExportReport) (SnapshotResult, error) {
	res := SnapshotResult{Snapshot: p.name}
	if p.err != nil {
		res.State, res.Error = StateFailed, p.err.Error()
		rep.Errorf("snapshot %s: %v", p.name, p.err)
		return res, nil
	}
	before := w.Stats()
	bad, err := exportChunks(ctx, w, src, p.todo, opt.Workers, rep)
	after := w.Stats()
	res.Chunks, res.Bytes = after.Chunks-before.Chunks, after.ChunkBytes-before.ChunkBytes
	report.Chunks += res.Chunks
	report.Bytes += res.Bytes
	if err != nil {
		res.State, res.Error = StateFailed, err.Error()
		return res, fmt.Errorf("snapshot %s: %w", p.name, err)
	}
	if err := exportSnapshot(ctx, w, src, p, bad, rep); err != nil {
		res.State, res.Error = StateFailed, err.Error()
		if !errors.Is(err, errNotExported) {
			return res, err
		}
		return res, nil
	}
	res.State = StateDone
	return res, nil
}

var errNotExported = errors.New("snapshot not exported")

// exportSnapshot writes the snapshot archive once every chunk of the
// snapshot is on the media set.
func exportSnapshot(ctx context.Context, w *media.Writer, src Source, p plannedSnapshot, bad []error, rep Reporter) error {
	store := src.Name()
	if err := w.Commit(); err != nil {
		return err
	}
	missing := 0
	for _, d := range p.all {
		if !w.ContainsChunk(store, d) {
			missing++
		}
	}
	if missing > 0 {
		rep.Errorf("snapshot %s: %d chunks could not be exported; snapshot not exported", p.name, missing)
		return fmt.Errorf("%w: %d chunks missing or corrupt (first: %v)", errNotExported, missing, firstErr(bad))
	}
	fsys, files, err := src.SnapshotFiles(ctx, p.name)
	if err != nil {
		rep.Errorf("snapshot %s: %v", p.name, err)
		return fmt.Errorf("%w: %w", errNotExported, err)
	}
	if err := w.WriteSnapshot(ctx, store, p.name, fsys, files); err != nil {
		return fmt.Errorf("snapshot %s: %w", p.name, err)
	}
	rep.Logf("snapshot %s: exported (tape %s)", p.name, w.CurrentTape())
	return nil
}

func firstErr(errs []error) error {
	if len(errs) == 0 {
		return errors.New("chunk written by an earlier snapshot failed")
	}
	return errs[0]
}
