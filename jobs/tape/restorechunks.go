package tape

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs/tape/format"
	"github.com/cairnfs/cairn/jobs/tape/media"
)

// chunkRestore restores the chunks of the pending snapshots.
type chunkRestore struct {
	r    *media.SetReader
	sink Sink
	opt  RestoreOptions

	mu      sync.Mutex
	failed  map[chunk.Digest]error        // chunks that could not be restored
	present map[chunk.Digest]bool         // in the sink (before or restored now)
	keys    map[chunk.Digest][]*crypt.Key // of encrypted snapshots: keys to check a chunk with
}

func newChunkRestore(r *media.SetReader, sink Sink, opt RestoreOptions) *chunkRestore {
	return &chunkRestore{r: r, sink: sink, opt: opt, failed: map[chunk.Digest]error{}, present: map[chunk.Digest]bool{},
		keys: map[chunk.Digest][]*crypt.Key{}}
}

type tapeFile struct {
	media format.UUID
	seq   int
	file  uint64
}

// run finds the missing chunks, the tape files that hold them, and reads
// those files in tape order.
func (c *chunkRestore) run(ctx context.Context, pending []*pendingSnapshot, rep *RestoreReport) error {
	want := map[chunk.Digest]bool{}
	files := map[tapeFile][]chunk.Digest{}
	seq := map[format.UUID]int{}
	for i, m := range c.r.Members() {
		seq[m.Label.UUID] = i
	}
	for _, p := range pending {
		c.noteKeys(p)
		for _, d := range p.chunks {
			if want[d] || c.present[d] || c.failed[d] != nil {
				continue
			}
			if c.sink.HasChunk(d) {
				c.present[d] = true
				rep.ChunksPresent++
				continue
			}
			m, f, ok := c.r.Catalog().LookupChunk(p.ref.Store, d)
			if !ok {
				c.failed[d] = fmt.Errorf("chunk %s is not on the media set", d)
				continue
			}
			want[d] = true
			tf := tapeFile{m, seq[m], f}
			files[tf] = append(files[tf], d)
		}
	}
	order := make([]tapeFile, 0, len(files))
	for tf := range files {
		order = append(order, tf)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].seq != order[j].seq {
			return order[i].seq < order[j].seq
		}
		return order[i].file < order[j].file
	})
	c.opt.Reporter.SetTotals(int64(len(want)), 0)
	for _, tf := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		label := c.label(tf.media)
		rep.FilesRead = append(rep.FilesRead, fmt.Sprintf("%s:%d", label, tf.file))
		c.opt.Reporter.SetPhase(fmt.Sprintf("restoring chunks (tape %s file %d)", label, tf.file))
		if err := c.readFile(ctx, tf, want, rep); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.opt.Reporter.Errorf("%v", err)
			c.mu.Lock()
			for _, d := range files[tf] {
				if !c.present[d] && c.failed[d] == nil {
					c.failed[d] = err
				}
			}
			c.mu.Unlock()
		}
	}
	return nil
}

func (c *chunkRestore) label(u format.UUID) string {
	for _, m := range c.r.Members() {
		if m.Label.UUID == u {
			return m.Label.LabelText
		}
	}
	return u.String()
}

// readFile reads one chunk archive and checks and inserts the wanted
// chunks on Workers goroutines.
func (c *chunkRestore) readFile(ctx context.Context, tf tapeFile, want map[chunk.Digest]bool, rep *RestoreReport) error {
	ch := make(chan media.Chunk, 2*c.opt.Workers)
	free := make(chan []byte, cap(ch)+c.opt.Workers+1) // blob buffers for reuse
	var wg sync.WaitGroup
	for range c.opt.Workers {
		wg.Go(func() {
			var dec []byte
			for ck := range ch {
				dec = c.insert(ck, dec, rep)
				select {
				case free <- ck.Blob[:0]:
				default:
				}
			}
		})
	}
	err := c.r.ReadChunkArchive(ctx, tf.media, tf.file, func(d chunk.Digest, blob []byte) error {
		if !want[d] {
			return nil
		}
		want[d] = false
		var buf []byte
		select {
		case buf = <-free:
		default:
		}
		select {
		case ch <- media.Chunk{Digest: d, Blob: append(buf, blob...)}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(ch)
	wg.Wait()
	return err
}

// insert checks a chunk (c.check) and inserts it. It returns the decode
// buffer to use next time.
func (c *chunkRestore) insert(ck media.Chunk, dec []byte, rep *RestoreReport) []byte {
	decrypted, dec, err := c.check(ck.Digest, ck.Blob, dec)
	if err == nil {
		_, err = c.sink.InsertChunk(ck.Digest, ck.Blob)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.failed[ck.Digest] = fmt.Errorf("chunk %s: %w", ck.Digest, err)
		c.opt.Reporter.Errorf("chunk %s: %v", ck.Digest, err)
		return dec
	}
	c.present[ck.Digest] = true
	rep.Chunks++
	rep.Bytes += int64(len(ck.Blob))
	if kind, _ := chunk.BlobKind(ck.Blob); kind.Encrypted() {
		if decrypted {
			rep.ChunksDecrypted++
		} else {
			rep.ChunksWithoutKey++
		}
	}
	c.opt.Reporter.AddDone(1, int64(len(ck.Blob)))
	return dec
}

// complete reports whether every chunk of p is in the sink, then commits.
func (c *chunkRestore) complete(p *pendingSnapshot, res *SnapshotResult) error {
	missing := 0
	var first error
	for _, d := range p.chunks {
		if !c.present[d] {
			missing++
			if first == nil {
				first = c.failed[d]
			}
		}
	}
	if missing > 0 {
		if first == nil {
			first = fmt.Errorf("not restored")
		}
		return fmt.Errorf("%d chunks missing (first: %w)", missing, first)
	}
	res.Chunks = int64(len(p.chunks))
	return p.w.Commit()
}
