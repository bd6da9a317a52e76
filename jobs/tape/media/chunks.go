package media

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// WriteChunks writes the chunks received from ch into chunk archives of
// store until ch is closed, moving to the next tape at LEOM. Archives are
// registered in the catalog as they are finished (Commit or WriteSnapshot
// makes that durable). On cancellation the open archive is finished and
// registered before ctx's error is returned.
func (w *Writer) WriteChunks(ctx context.Context, store string, ch <-chan Chunk) error {
	var next *Chunk
	recv := func() (bool, error) {
		t0 := time.Now()
		defer func() { w.stats.Wait += time.Since(t0) }()
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case c, ok := <-ch:
			if !ok {
				return false, nil
			}
			next = &c
			return true, nil
		}
	}
	if ok, err := recv(); !ok {
		return err
	}
	for {
		more, err := w.chunkArchive(ctx, store, &next, recv)
		if err != nil || !more {
			return err
		}
	}
}

// chunkArchive writes one chunk archive, starting with *next. It returns
// more=true when a chunk is still waiting (*next) for the next archive.
func (w *Writer) chunkArchive(ctx context.Context, store string, next **Chunk, recv func() (bool, error)) (bool, error) {
	if err := w.ensureTape(); err != nil {
		return false, err
	}
	d, label := w.p.d, w.cur.m.Label.LabelText
	pos, err := d.Position()
	if err != nil {
		return false, err
	}
	fresh := w.fresh()
	fw, err := d.WriteFile()
	if err != nil {
		return false, err
	}
	defer fw.Close()
	a, err := format.NewChunkArchiveWriter(fw, store, w.opts.MaxArchiveSize)
	if err != nil {
		return false, fmt.Errorf("tape %s file %d: %w", label, pos, err)
	}
	more, rerr := true, error(nil)
	for more {
		c := *next
		ok, err := a.WriteChunk(c.Digest, c.Blob)
		if err != nil {
			return false, fmt.Errorf("tape %s file %d: %w", label, pos, err)
		}
		if !ok {
			break
		}
		w.stats.Chunks++
		w.stats.ChunkBytes += int64(len(c.Blob))
		if c.Done != nil {
			c.Done()
		}
		*next = nil
		more, rerr = recv()
	}
	if err := a.Finish(); err != nil {
		return false, fmt.Errorf("tape %s file %d: %w", label, pos, err)
	}
	if err := w.register(a, uint64(pos), store); err != nil {
		return false, err
	}
	if a.LEOM() {
		if err := w.markFull(); err != nil {
			return false, err
		}
		if fresh && len(a.Digests()) == 0 {
			return false, fmt.Errorf("chunk %s (%d bytes): %w", (*next).Digest, len((*next).Blob), ErrTooLarge)
		}
	}
	if rerr != nil {
		return false, rerr
	}
	return more, ctx.Err()
}

func (w *Writer) register(a *format.ChunkArchiveWriter, file uint64, store string) error {
	w.stats.Archives++
	digests := append([]chunk.Digest(nil), a.Digests()...)
	return w.cur.cat.RegisterChunkArchive(a.UUID(), file, store, digests)
}
