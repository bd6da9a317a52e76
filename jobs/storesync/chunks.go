package storesync

import (
	"context"
	"fmt"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"golang.org/x/sync/errgroup"
)

// chunkItem is one entry of an index on its way to the target.
type chunkItem struct {
	d    chunk.Digest
	size int
}

// copyChunks makes every chunk x lists present in the target: a feeder
// hands the digests over a channel of Workers slots to Workers
// goroutines, which reuse or copy each. The first failure ends it and is
// returned, naming the chunk and the index.
func (s *Syncer) copyChunks(ctx context.Context, x index.Index, fi store.FileInfo, known store.KnownSet, filter *store.TouchFilter) error {
	g, ctx := errgroup.WithContext(ctx)
	feed := make(chan chunkItem, s.opt.Workers)
	g.Go(func() error {
		defer close(feed)
		var last chunk.Digest
		for i := range x.Len() {
			d, start, end := x.Chunk(i)
			if err := x.Err(); err != nil {
				return fmt.Errorf("source: %w", err)
			}
			if i > 0 && d == last {
				continue // a run of one chunk (zeros of an image)
			}
			last = d
			select {
			case feed <- chunkItem{d: d, size: int(end - start)}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	encrypted := fi.CryptMode == "encrypt"
	for range s.opt.Workers {
		g.Go(func() error {
			w := chunkWorker{s: s, known: known, filter: filter, encrypted: encrypted}
			for it := range feed {
				if err := w.copy(ctx, it); err != nil {
					return fmt.Errorf("index %s: %w", fi.Filename, err)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// chunkWorker copies chunks with buffers of its own.
type chunkWorker struct {
	s         *Syncer
	known     store.KnownSet
	filter    *store.TouchFilter
	encrypted bool // the archive's chunks are encrypted (manifest's crypt mode)
	buf       []byte
	scratch   []byte
}

// copy makes chunk it present in the target: reused (touched) when it is
// there, else read from the source, checked and inserted. Where a lookup
// in the target costs a request and a read of the source none (local to
// a bucket), a chunk of no base snapshot is read and inserted at once:
// the insert's own lookup finds it when the target has it (and keeps it
// as a reuse would), one request less for every chunk copied.
func (w *chunkWorker) copy(ctx context.Context, it chunkItem) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, known := w.known[it.d]; known || w.s.lookFirst || w.filter.Has(it.d) {
		reused, err := w.s.to.ReuseChunkContext(ctx, w.known, w.filter, it.d)
		if err != nil {
			return fmt.Errorf("target: chunk %s: %w", it.d, err)
		}
		if reused {
			w.s.chunksReused.Add(1)
			return nil
		}
	}
	blob, err := w.s.from.ReadChunk(ctx, it.d, store.ChunkOptions{Buf: w.buf})
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer blob.Release()
	w.buf = blob.Bytes()
	var n int
	var existed bool
	err = blob.Do(func(raw []byte) error {
		if err := w.check(raw, it); err != nil {
			return fmt.Errorf("source: chunk %s: %w", it.d, err)
		}
		n = len(raw)
		existed, err = w.s.to.InsertChunkContext(ctx, it.d, raw)
		if err != nil {
			return fmt.Errorf("target: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.filter.Add(it.d)
	if existed {
		w.s.chunksReused.Add(1)
		return nil
	}
	w.s.chunksCopied.Add(1)
	w.s.bytesCopied.Add(int64(n))
	w.s.obs.AddDone(0, int64(n))
	return nil
}

// check judges a source blob before it is copied: its data must hash to
// its digest and have the index's size; an encrypted one, which cannot
// be decoded without its key, must belong to an encrypted archive and
// pass its CRC.
func (w *chunkWorker) check(raw []byte, it chunkItem) error {
	kind, err := chunk.BlobKind(raw)
	if err != nil {
		return err
	}
	if kind.Encrypted() {
		if !w.encrypted {
			return fmt.Errorf("%w: an encrypted chunk in an archive the manifest says is not encrypted", chunk.ErrCorrupt)
		}
		_, err := chunk.CheckCRC(raw)
		return err
	}
	if w.encrypted {
		return fmt.Errorf("%w: a plain chunk in an archive the manifest says is encrypted", chunk.ErrCorrupt)
	}
	_, err = chunk.DecodeChunkReuse(&w.scratch, raw, it.d, it.size)
	return err
}
