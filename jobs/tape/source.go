package tape

import (
	"context"
	"io/fs"

	"github.com/cairnfs/cairn/chunk"
)

// Source is where Export reads snapshots and chunks. Snapshots are named
// as on tape: [ns/NAME/…]TYPE/ID/TIME.
type Source interface {
	// Name is the datastore name recorded in the archives.
	Name() string
	// SnapshotFiles returns the snapshot's files in archive order (the
	// manifest first, then the manifest's files, then client.log.blob).
	SnapshotFiles(ctx context.Context, snapshot string) (fs.FS, []string, error)
	// Chunks returns the digests the snapshot's indexes reference, each
	// once, in index order.
	Chunks(ctx context.Context, snapshot string) ([]chunk.Digest, error)
	// LoadChunk reads a chunk's raw DataBlob. It is called from several
	// goroutines at once.
	LoadChunk(ctx context.Context, d chunk.Digest) ([]byte, error)
}

// Orderer is implemented by sources that prefer another read order for a
// list of chunks (e.g. by inode on rotating disks).
type Orderer interface {
	OrderChunks(ctx context.Context, ds []chunk.Digest) []chunk.Digest
}

// BufferLoader is implemented by sources that can read a chunk into a
// buffer given to them (grown as needed); Export then recycles the
// buffers of chunks on tape instead of allocating one per chunk.
type BufferLoader interface {
	LoadChunkInto(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error)
}

// Prefetcher is implemented by sources that can start reading a chunk
// in the background (a read-ahead hint); Export gives the hint as a
// chunk enters the readers' queue.
type Prefetcher interface {
	PrefetchChunk(d chunk.Digest)
}

// Locker is implemented by sources whose snapshots can be removed while
// Export runs (a store: forget, prune). Export holds each snapshot locked
// while it reads it, so that it stays until its archive is written; a
// snapshot removed before that fails the lock with an error matching
// store.ErrNotFound and is reported gone, not failed.
type Locker interface {
	LockSnapshot(ctx context.Context, snapshot string) (unlock func(), err error)
}

// Sizer is implemented by sources that can tell a chunk's stored (blob)
// size cheaply, before reading it; Export then gives progress a byte
// total.
type Sizer interface {
	ChunkSize(d chunk.Digest) (int64, bool)
}

// Reporter receives progress and log lines; a *jobs.Job is one. Its
// methods are called from several goroutines at once.
type Reporter interface {
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	SetPhase(phase string)
	SetTotals(items, bytes int64)
	AddDone(items, bytes int64)
}

type nopReporter struct{}

func (nopReporter) Logf(string, ...any)    {}
func (nopReporter) Errorf(string, ...any)  {}
func (nopReporter) SetPhase(string)        {}
func (nopReporter) SetTotals(int64, int64) {}
func (nopReporter) AddDone(int64, int64)   {}

var _ Reporter = nopReporter{}
