package tape

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// RestoreKind is the tape-restore job: it restores snapshots of a
// media set from a virtual tape drive into the store, reading only the
// tape files that hold chunks the store lacks.
type RestoreKind struct{}

var (
	_ jobs.Kind     = RestoreKind{}
	_ jobs.Work     = (*tapeRestorer)(nil)
	_ jobs.Reporter = (*tapeRestorer)(nil)
)

// Name implements jobs.Kind.
func (RestoreKind) Name() string { return "tape-restore" }

// New implements jobs.Kind.
func (RestoreKind) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	opt, err := ParseRestoreParams(params)
	if err != nil {
		return nil, err
	}
	return &tapeRestorer{s: s, opt: opt}, nil
}

// RestoreJobReport is what a tape-restore job did; Status.Result holds
// one. The restore's own report is there once the job has ended.
type RestoreJobReport struct {
	Drive string `json:"drive"`
	*RestoreReport
	SnapshotsOK      int `json:"snapshots_ok"`
	SnapshotsPresent int `json:"snapshots_present"` // in the store before
	SnapshotsFailed  int `json:"snapshots_failed"`
	// ArchivesRefused counts the snapshot archives refused beside
	// another of the same snapshot (SnapshotResult.Archives).
	ArchivesRefused int      `json:"archives_refused"`
	Seconds         float64  `json:"seconds"`
	MBps            float64  `json:"mb_per_s"` // chunk bytes inserted per second
	Next            []string `json:"next_steps,omitempty"`
}

type tapeRestorer struct {
	s   *store.Store
	opt RestoreJobOptions

	mu  sync.Mutex
	rep RestoreJobReport
}

// Report implements jobs.Reporter.
func (x *tapeRestorer) Report() any {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.rep
	r.Next = slices.Clone(r.Next)
	return r
}

// Run implements jobs.Work.
func (x *tapeRestorer) Run(ctx context.Context, j *jobs.Job) error {
	start := time.Now()
	defer j.SetPhase("done")
	x.mu.Lock()
	x.rep.Drive = x.opt.Drive
	x.mu.Unlock()
	d, err := OpenTapeDrive(ctx, x.opt.Drive)
	if err != nil {
		return err
	}
	defer d.Close()
	sink, err := NewStoreSink(ctx, x.s)
	if err != nil {
		return err
	}
	defer sink.Close()
	rep, err := Restore(ctx, d, sink, RestoreOptions{
		MediaSet:  x.opt.MediaSet,
		Pool:      x.opt.Pool,
		Store:     x.opt.SourceStore,
		Snapshots: x.opt.Snapshots,
		Workers:   x.opt.WorkerThreads,
		Reporter:  j,
		Logger:    j.Logger(),
		// the store's keys (--keyfile) check encrypted snapshots' chunks
		SnapshotKey: x.s.SnapshotKey,
	})
	x.finish(rep, err, ctx.Err() != nil, time.Since(start))
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("tape restore: %w", err)
	}
	return ctx.Err()
}

func (x *tapeRestorer) finish(rep *RestoreReport, err error, cancelled bool, el time.Duration) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := &x.rep
	r.RestoreReport = rep
	r.Seconds = el.Seconds()
	if rep == nil {
		r.Next = []string{fmt.Sprintf("fix the error above and run the restore again: %v", err)}
		return
	}
	r.SnapshotsOK, r.SnapshotsPresent, r.SnapshotsFailed = countSnapshots(rep.Snapshots)
	r.ArchivesRefused = rep.Refused()
	r.MBps = float64(rep.Bytes) / 1e6 / max(r.Seconds, 1e-9)
	switch {
	case cancelled:
		r.Next = append(r.Next, "the restore was cancelled; restored chunks stay, unfinished snapshots were removed: run it again to finish")
	case err != nil:
		r.Next = append(r.Next, fmt.Sprintf("the restore stopped: %v", err))
	}
	if r.SnapshotsFailed > 0 {
		r.Next = append(r.Next, "snapshots failed: check the tape (cairn tape rebuild-catalog) or restore them from another media set")
	}
	if r.ArchivesRefused > 0 {
		r.Next = append(r.Next, "snapshot archives were refused beside others of the same snapshot: find out who wrote them to the tape")
	}
	if r.SnapshotsOK > 0 {
		r.Next = append(r.Next, "run cairn verify on the restored snapshots")
	}
	if len(r.Next) == 0 {
		r.Next = append(r.Next, "nothing to do: every selected snapshot is in the store")
	}
}
