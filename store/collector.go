package store

import (
	"context"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

// What garbage collection needs of where the chunks live, the same for a
// local store and a remote one: jobs/gc walks the snapshots, reads their
// indexes and keeps the report; a ChunkCollector says how the store's
// clock is read, how a referenced chunk is marked and how the chunks
// nothing marked are swept. The local one (gc_local*.go) marks by atime
// and sweeps the prefix directories; the remote one (store/s3store/gc*.go)
// marks into a sorted set on disk and sweeps the bucket's listing.

// GCWriterMargin is subtracted from the oldest running writer's start, as
// PBS subtracts 300 s: timestamps are coarse and the clocks of
// processes, of a network file system's server or of an object store's
// nodes may differ a little.
const GCWriterMargin = 5 * time.Minute

// ChunkCollector is one garbage collection's access to a store's chunks.
// Begin comes first, then MarkChunk (from many goroutines) for every
// chunk an index references, EndMark, Sweep, and Close in any case. The
// caller holds the store's gc job lock (LockJob) throughout.
type ChunkCollector interface {
	// Begin reads the clocks the cutoff comes from and returns it: chunks
	// not marked and older than the cutoff are garbage. It fails, and
	// nothing is removed, when the store cannot tell used chunks from
	// garbage (a file system ignoring atime updates; another GC holding
	// the bucket). When it returns, the snapshots the mark must read are
	// those the store's directory shows (a remote store's mirror is
	// refreshed from the bucket).
	Begin(ctx context.Context, atimeCutoff time.Duration) (GCStart, error)
	// MarkChunk records that an index references chunk d. An error
	// wrapping ErrNotFound says the chunk is missing (a collector that
	// learns that only while sweeping reports it there, SweepOptions.Missing).
	MarkChunk(ctx context.Context, d chunk.Digest) error
	// MarkMissing keeps what a missing chunk d may still have (.bad
	// copies, a copy a killed sweep set aside); kept tells whether
	// anything was found.
	MarkMissing(d chunk.Digest) (kept bool, err error)
	// EndMark ends the mark: every referenced chunk has been marked.
	EndMark(ctx context.Context) error
	// Sweep removes the chunks that are not marked and older than the
	// cutoff Begin returned, counting what it sees.
	Sweep(ctx context.Context, opt SweepOptions) (SweepCounts, error)
	// Close releases what the collection holds (leases, temporary
	// files); it is safe to call more than once.
	Close() error
}

// GCStart is what Begin read: when the mark started, the oldest running
// writer and the cutoff, all in the clock the chunks' times are in (the
// file system's, or the object store's).
type GCStart struct {
	Phase1       time.Time
	OldestWriter time.Time // zero when no writer runs
	Cutoff       time.Time
	// IndexFiles counts the index files Begin marked itself (those of a
	// remote store's unfinished snapshots that the mirror does not hold).
	IndexFiles int64
	// Note says what Begin checked, for the log ("access time check
	// passed").
	Note string
}

// SweepOptions tune a Sweep.
type SweepOptions struct {
	// Workers sizes the sweep's pool (0: one).
	Workers int
	// Done is called as the sweep progresses, with how many of
	// PrefixDirs units of work were done since the last call (from
	// several goroutines).
	Done func(n int)
	// Missing is called for every referenced chunk the sweep finds
	// missing (a collector that tells it only then), from one goroutine.
	Missing func(d chunk.Digest)
}

// SweepCounts are what a sweep did and saw, counted as PBS counts them:
// removed, pending (not marked, newer than the cutoff, older than the
// mark's start) or kept on disk.
type SweepCounts struct {
	Files                       int64 // chunk files (objects) looked at
	RemovedChunks, RemovedBytes int64
	RemovedBad, StillBad        int64
	RemovedTemp, RestoredChunks int64
	PendingChunks, PendingBytes int64
	DiskChunks, DiskBytes       int64
	MissingChunks               int64 // referenced but absent (when only the sweep can tell)
}

// Add adds o's counts to c.
func (c *SweepCounts) Add(o SweepCounts) {
	c.Files += o.Files
	c.RemovedChunks += o.RemovedChunks
	c.RemovedBytes += o.RemovedBytes
	c.RemovedBad += o.RemovedBad
	c.StillBad += o.StillBad
	c.RemovedTemp += o.RemovedTemp
	c.RestoredChunks += o.RestoredChunks
	c.PendingChunks += o.PendingChunks
	c.PendingBytes += o.PendingBytes
	c.DiskChunks += o.DiskChunks
	c.DiskBytes += o.DiskBytes
	c.MissingChunks += o.MissingChunks
}

// Collecting is the optional side of a Backend whose chunks a garbage
// collection collects otherwise than the local directory's files
// (localCollector): a remote store's.
type Collecting interface {
	// Collector returns the collector of one garbage collection of s.
	Collector(s *Store) ChunkCollector
}

// ChunkCollector returns the collector of the store's chunks: one per
// garbage collection.
func (s *Store) ChunkCollector() ChunkCollector {
	if c, ok := s.backend.(Collecting); ok {
		return c.Collector(s)
	}
	return &localCollector{s: s}
}

// GCCutoff is the time below which an unmarked chunk is garbage: the
// mark's start less atimeCutoff, or, when older, the oldest running
// writer's start less GCWriterMargin (both in the store's clock).
func GCCutoff(phase1 time.Time, atimeCutoff time.Duration, writer time.Time) time.Time {
	t := phase1.Add(-atimeCutoff)
	if !writer.IsZero() {
		if w := writer.Add(-GCWriterMargin); w.Before(t) {
			t = w
		}
	}
	return t
}
