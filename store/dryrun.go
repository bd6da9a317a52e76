package store

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

// A dry run (StartDryRun) is a backup that does everything but write to
// the store: its sources are read, chunked, hashed and compressed, its
// chunks looked up (a stat, or a HEAD on a remote store) and its
// references picked as a backup's would be, while nothing is created,
// touched, locked or registered. Its index files and blobs go to a
// temporary directory outside the store, removed when it ends. The
// upload counters (UploadStats) then say what a backup would have read,
// found stored, and stored new (NewStored: the compressed size of the
// new chunks, exact as they are compressed as a backup would).
//
// A chunk a dry run would store is remembered (32 bytes and a map entry
// a new chunk) so that a second occurrence counts as stored already, as
// it would in a backup. Without locks a GC that runs meanwhile may
// remove chunks the dry run counted as stored: it is an estimate.

// StartDryRun begins a dry run of a backup of g at t (see StartBackup
// for t). It turns s into a dry-run store for good: every chunk write
// and touch through s is answered without reaching the store, so s must
// serve this dry run alone.
func (s *Store) StartDryRun(ctx context.Context, g Group, t time.Time) (*Backup, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if !t.IsZero() {
		if err := CheckBackupTime(t); err != nil {
			return nil, err
		}
	}
	s.makeDry()
	if err := s.meta.RefreshGroup(ctx, g); err != nil { // a remote store: reads the bucket, writes its local mirror only
		return nil, err
	}
	snap, err := s.backupTime(ctx, g, t)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cairn-dry-run-")
	if err != nil {
		return nil, fmt.Errorf("dry run of %s: %w", snap, err)
	}
	return &Backup{ctx: ctx, s: s, snap: snap, dir: dir, dry: true}, nil
}

// Dry tells whether b is a dry run (StartDryRun).
func (b *Backup) Dry() bool { return b.dry }

// makeDry wraps s's backend in one that writes nothing.
func (s *Store) makeDry() {
	switch be := s.backend.(type) {
	case *dryChunks, dryProbing:
		return
	case Prober:
		s.backend = dryProbing{&dryChunks{Backend: s.backend}, be}
	default:
		s.backend = &dryChunks{Backend: be}
	}
}

// dryChunks answers a dry run's chunk writes and touches from the store
// it wraps, read only, and the chunks the dry run would have stored.
type dryChunks struct {
	Backend
	mu    sync.Mutex
	added map[chunk.Digest]struct{}
}

// add records d as stored by the dry run; existed tells it was already.
func (c *dryChunks) add(d chunk.Digest) (existed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.added == nil {
		c.added = make(map[chunk.Digest]struct{})
	}
	_, existed = c.added[d]
	c.added[d] = struct{}{}
	return existed
}

func (c *dryChunks) addedChunk(d chunk.Digest) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.added[d]
	return ok
}

// InsertChunkParts implements Backend: nothing is written.
func (c *dryChunks) InsertChunkParts(ctx context.Context, d chunk.Digest, _, _ []byte) (bool, error) {
	if has, err := c.Backend.HasChunk(ctx, d); err != nil || has {
		return has, err
	}
	return c.add(d), nil
}

// HasChunk implements Backend.
func (c *dryChunks) HasChunk(ctx context.Context, d chunk.Digest) (bool, error) {
	if c.addedChunk(d) {
		return true, nil
	}
	return c.Backend.HasChunk(ctx, d)
}

// TouchChunk implements Backend: the chunk is looked up, not touched.
func (c *dryChunks) TouchChunk(ctx context.Context, d chunk.Digest) error {
	has, err := c.HasChunk(ctx, d)
	if err != nil {
		return fmt.Errorf("dry run: %w", err)
	}
	if !has {
		return fmt.Errorf("dry run: chunk %s: %w", d, fs.ErrNotExist)
	}
	return nil
}

// dryProbing is dryChunks over a remote store: as many lookups in
// flight, and the same image chunk size, as a backup would have.
type dryProbing struct {
	*dryChunks
	p Prober
}

func (c dryProbing) PutMissing(_ context.Context, d chunk.Digest, _, _ []byte) (bool, error) {
	return c.add(d), nil
}

// LookFirst implements Prober: a dry run stores nothing, it looks.
func (c dryProbing) LookFirst() bool { return true }

func (c dryProbing) Parallelism() int    { return c.p.Parallelism() }
func (c dryProbing) Readahead() int      { return c.p.Readahead() }
func (c dryProbing) ImageChunkSize() int { return c.p.ImageChunkSize() }
