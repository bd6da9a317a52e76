package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

// localCollector is the ChunkCollector of a local store: the mark
// touches each referenced chunk file's atime (MarkChunk), the sweep
// removes the files of the prefix directories whose atime is older than
// the cutoff (gc_local_sweep.go). docs/design/gc.md has the argument.
type localCollector struct {
	s     *Store
	start GCStart
}

// Begin implements ChunkCollector: the atime self-test (CheckAtime) gives
// the mark's start in the file system's clock, then the oldest running
// writer is read (OldestWriter) and moved from the process clock into
// the file system's by the skew the self-test measured.
func (c *localCollector) Begin(ctx context.Context, atimeCutoff time.Duration) (GCStart, error) {
	local := time.Now()
	fsNow, err := c.s.CheckAtime()
	if err != nil {
		return GCStart{}, err
	}
	writer, ok, err := c.s.OldestWriter()
	if err != nil {
		return GCStart{}, fmt.Errorf("running writers: %w", err)
	}
	st := GCStart{Phase1: fsNow, Note: "access time check passed"}
	if ok {
		st.OldestWriter = writer.Add(fsNow.Sub(local))
	}
	st.Cutoff = GCCutoff(fsNow, atimeCutoff, st.OldestWriter)
	c.start = st
	return st, nil
}

// MarkChunk implements ChunkCollector: Store.MarkChunk.
func (c *localCollector) MarkChunk(_ context.Context, d chunk.Digest) error { return c.s.MarkChunk(d) }

// MarkMissing implements ChunkCollector: Store.TouchMissing.
func (c *localCollector) MarkMissing(d chunk.Digest) (bool, error) { return c.s.TouchMissing(d) }

// EndMark implements ChunkCollector: the touches are the marks.
func (c *localCollector) EndMark(context.Context) error { return nil }

// Close implements ChunkCollector.
func (c *localCollector) Close() error { return nil }
