package gc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairnfs/cairn/store"
)

// DefaultAtimeCutoff is how long a chunk no index references stays, as
// PBS's default gc-atime-cutoff: 24 hours and 5 minutes.
const DefaultAtimeCutoff = 24*time.Hour + 5*time.Minute

// MaxAtimeCutoff bounds --atime-cutoff (a typo of a unit should not keep
// garbage for centuries, nor overflow a time.Time).
const MaxAtimeCutoff = 100 * 365 * 24 * time.Hour

// Sentinel errors of GC, matched with errors.Is.
var (
	// ErrAtimeUnsupported: the store's file system does not record an
	// explicit atime update, so GC cannot tell used chunks from garbage.
	ErrAtimeUnsupported = store.ErrNoAtime
	// ErrBadIndex: an index could not be read; GC then removes nothing,
	// since a chunk only that index uses would look unused.
	ErrBadIndex = errors.New("unreadable index: nothing removed")
)

// Observer follows a GC's progress; *jobs.Job is one. Its methods are
// called from several goroutines.
type Observer interface {
	Logf(format string, args ...any)
	SetPhase(phase string)
	SetTotals(items, bytes int64)
	AddDone(items, bytes int64)
}

// Options tune a GC run.
type Options struct {
	// AtimeCutoff: chunks whose atime is older than phase 1's start minus
	// this are removed (unless a running writer is older). Zero is
	// allowed: every chunk not marked by phase 1 nor used by a running
	// writer goes. Callers wanting PBS's default pass DefaultAtimeCutoff.
	AtimeCutoff time.Duration
	// Logger receives progress and warnings when there is no Observer
	// (nil: discarded).
	Logger *slog.Logger
	// Observer, if set, follows the phases and counts.
	Observer Observer
	// MarkWorkers and SweepWorkers size the two phases' worker pools
	// (0: a default from the number of CPUs).
	MarkWorkers  int
	SweepWorkers int
	// CacheEntries is the touched-digest cache's size (0: DefaultCacheEntries).
	CacheEntries int
	// UPID names the job in the saved status ("" outside a job).
	UPID string

	lockHeld  bool                 // the job manager holds LockJob("gc") already
	collector store.ChunkCollector // tests: replaces Store.ChunkCollector
}

// Run collects a store's garbage: phase 1 marks (touches) every chunk
// any index of any snapshot references, phase 2 removes the chunk files
// whose atime is older than the cutoff. It takes LockJob("gc"), saves the
// report in the store (.gc-status) and returns it; on error the report
// holds what was done and Error says why.
func Run(ctx context.Context, s *store.Store, opt Options) (Report, error) {
	if opt.AtimeCutoff < 0 || opt.AtimeCutoff > MaxAtimeCutoff {
		return Report{}, fmt.Errorf("gc: atime cutoff %s: want 0 to %s", opt.AtimeCutoff, MaxAtimeCutoff)
	}
	if !opt.lockHeld {
		lock, err := s.LockJob(KindName)
		if err != nil {
			return Report{}, fmt.Errorf("gc: %w", err)
		}
		defer lock.Unlock()
	}
	return newRun(s, opt).run(ctx)
}
