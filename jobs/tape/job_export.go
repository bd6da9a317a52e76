package tape

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/cairnfs/cairn/store"
)

// ExportKind is the tape-export job: it writes snapshots of the store
// to a media pool on a virtual tape drive, in Proxmox Backup Server's
// tape format (package jobs/tape).
type ExportKind struct {
	// Sysfs is where chunk-order=auto reads sysfs (default /sys).
	Sysfs string
}

var (
	_ jobs.Kind     = ExportKind{}
	_ jobs.Work     = (*tapeExporter)(nil)
	_ jobs.Reporter = (*tapeExporter)(nil)
)

// Name implements jobs.Kind.
func (ExportKind) Name() string { return "tape-export" }

// New implements jobs.Kind.
func (k ExportKind) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	opt, err := ParseExportParams(params)
	if err != nil {
		return nil, err
	}
	sysfs := k.Sysfs
	if sysfs == "" {
		sysfs = jobs.DefaultSysfs
	}
	return &tapeExporter{s: s, opt: opt, sysfs: sysfs}, nil
}

// ExportJobReport is what a tape-export job did; Status.Result holds
// one. The export's own report is there once the job has ended.
type ExportJobReport struct {
	Drive            string `json:"drive"`
	Pool             string `json:"pool"`
	ChunkOrder       string `json:"chunk_order"`
	ChunkOrderReason string `json:"chunk_order_reason,omitempty"`
	*ExportReport
	SnapshotsOK      int      `json:"snapshots_ok"`
	SnapshotsPresent int      `json:"snapshots_present"` // on the media set before
	SnapshotsFailed  int      `json:"snapshots_failed"`
	Seconds          float64  `json:"seconds"`
	MBps             float64  `json:"mb_per_s"`          // chunk bytes written per second
	WriterIdleShare  float64  `json:"writer_idle_share"` // of the time, the tape writer waited for chunks
	Next             []string `json:"next_steps,omitempty"`
}

// tapeExporter is one tape-export job's work.
type tapeExporter struct {
	s     *store.Store
	opt   ExportJobOptions
	sysfs string

	mu  sync.Mutex
	rep ExportJobReport
}

// Report implements jobs.Reporter.
func (x *tapeExporter) Report() any {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.rep
	r.Next = slices.Clone(r.Next)
	return r
}

// Run implements jobs.Work.
func (x *tapeExporter) Run(ctx context.Context, j *jobs.Job) error {
	start := time.Now()
	defer j.SetPhase("done")
	x.mu.Lock()
	x.rep.Drive, x.rep.Pool = x.opt.Drive, x.opt.Pool
	x.mu.Unlock()
	// Each snapshot is held locked (shared) while it is read (Export,
	// StoreSource.LockSnapshot): forget and prune refuse it meanwhile, and
	// garbage collection, which marks every snapshot still there, keeps
	// its chunks.
	d, err := OpenTapeDrive(ctx, x.opt.Drive)
	if err != nil {
		return err
	}
	defer d.Close()
	j.SetPhase("selecting")
	snaps, err := selectForTape(ctx, j, x.s, x.opt)
	if err != nil {
		return err
	}
	if len(snaps) == 0 {
		return fmt.Errorf("no finished snapshot to export")
	}
	order, why := chunkOrder(x.opt.ChunkOrder, x.sysfs, x.s)
	if x.opt.ChunkOrder == jobs.OrderAuto {
		j.Logf("chunk-order=auto: %s", why)
	}
	x.mu.Lock()
	x.rep.ChunkOrder, x.rep.ChunkOrderReason = order, why
	x.mu.Unlock()
	j.Logf("exporting %d snapshot(s) to pool %s on %s: %d worker thread(s), chunk order %s",
		len(snaps), x.opt.Pool, x.opt.Drive, x.opt.WorkerThreads, order)
	src := &StoreSource{S: x.s, InodeOrder: order == jobs.OrderInode}
	rep, err := Export(ctx, d, src, snaps, ExportOptions{
		Pool:        x.opt.Pool,
		PoolOptions: media.PoolOptions{TapeSize: x.opt.TapeSize, AutoCreate: x.opt.AutoCreate},
		NewSet:      x.opt.NewSet,
		Workers:     x.opt.WorkerThreads,
		Reporter:    j,
		Logger:      j.Logger(),
	})
	x.finish(rep, err, ctx.Err() != nil, time.Since(start))
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("tape export: %w", err)
	}
	return ctx.Err()
}

// finish fills in the report's totals and next steps.
func (x *tapeExporter) finish(rep *ExportReport, err error, cancelled bool, el time.Duration) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := &x.rep
	r.ExportReport = rep
	r.Seconds = el.Seconds()
	if rep == nil {
		r.Next = []string{fmt.Sprintf("fix the error above and run the export again: %v", err)}
		return
	}
	r.SnapshotsOK, r.SnapshotsPresent, r.SnapshotsFailed = countSnapshots(rep.Snapshots)
	r.MBps = float64(rep.Bytes) / 1e6 / max(r.Seconds, 1e-9)
	if rep.Duration > 0 {
		r.WriterIdleShare = float64(rep.WriterIdle) / float64(rep.Duration)
	}
	switch {
	case cancelled:
		r.Next = append(r.Next, "the export was cancelled; the media set is usable: run the export again to write the rest")
	case err != nil:
		r.Next = append(r.Next, fmt.Sprintf("the export stopped: %v; what was committed before is on the media set", err))
		if errors.Is(err, media.ErrNoTape) {
			r.Next = append(r.Next, "add a tape to the pool (cairn tape label --pool "+x.opt.Pool+") or allow auto-create")
		}
	}
	if r.SnapshotsFailed > 0 {
		r.Next = append(r.Next, "snapshots failed: run cairn verify on them; a new backup heals missing or corrupt chunks, then export again")
	}
	if len(r.Next) == 0 {
		r.Next = append(r.Next, "nothing to do: every snapshot is on media set "+rep.MediaSet)
	}
}

// OpenTapeDrive opens an existing virtual drive directory, failing at
// once (not waiting) when another process uses it.
func OpenTapeDrive(ctx context.Context, dir string) (*drive.Drive, error) {
	octx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	d, err := drive.Open(octx, dir)
	if errors.Is(err, drive.ErrBusy) && ctx.Err() == nil {
		return nil, fmt.Errorf("tape drive %s is in use by another process (an export or restore running?): %w", dir, drive.ErrBusy)
	}
	return d, err
}

// chunkOrder resolves chunk-order=auto from the store's disk, as verify
// does: inode order on rotational disks, index order otherwise.
func chunkOrder(order, sysfs string, s *store.Store) (string, string) {
	return jobs.ChunkOrder(order, sysfs, s)
}
