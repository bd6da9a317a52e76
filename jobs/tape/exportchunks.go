package tape

import (
	"context"
	"fmt"
	"sync"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/media"
)

// exportChunks reads todo on n goroutines into a channel of max(2n, 3)
// chunks that the tape writer drains. Unreadable or corrupt chunks are
// returned, not written.
func exportChunks(ctx context.Context, w *media.Writer, src Source, todo []chunk.Digest, n int, rep Reporter) ([]error, error) {
	if len(todo) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	feed := make(chan chunk.Digest, n)
	out := make(chan media.Chunk, max(2*n, 3))
	bufs := newBufferList(src, cap(out)+n+1)
	var mu sync.Mutex
	var bad []error
	pf, _ := src.(Prefetcher)
	go func() {
		defer close(feed)
		for _, d := range todo {
			if pf != nil {
				pf.PrefetchChunk(d)
			}
			select {
			case feed <- d:
			case <-ctx.Done():
				return
			}
		}
	}()
	var readers sync.WaitGroup
	for range n {
		readers.Go(func() {
			for d := range feed {
				c, err := bufs.load(ctx, d)
				if err != nil {
					if ctx.Err() == nil {
						rep.Errorf("chunk %s: %v", d, err)
						mu.Lock()
						bad = append(bad, err)
						mu.Unlock()
					}
					continue
				}
				select {
				case out <- c:
					rep.AddDone(1, int64(len(c.Blob)))
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		readers.Wait()
		close(out)
	}()
	err := w.WriteChunks(ctx, src.Name(), out)
	cancel()
	for range out { // let blocked readers finish
	}
	readers.Wait()
	return bad, err
}

// bufferList loads chunks, recycling the buffers of chunks already on
// tape when the source can read into a buffer: a bounded free list, so
// no more buffers live than chunks in flight.
type bufferList struct {
	src  Source
	into BufferLoader // nil: the source allocates
	free chan []byte
}

func newBufferList(src Source, n int) *bufferList {
	b := &bufferList{src: src}
	if bl, ok := src.(BufferLoader); ok {
		b.into, b.free = bl, make(chan []byte, n)
	}
	return b
}

// load reads a chunk and checks its CRC (as PBS does when it reads a
// chunk for tape).
func (b *bufferList) load(ctx context.Context, d chunk.Digest) (media.Chunk, error) {
	var blob []byte
	var err error
	if b.into == nil {
		blob, err = b.src.LoadChunk(ctx, d)
	} else {
		var buf []byte
		select {
		case buf = <-b.free:
		default:
		}
		blob, err = b.into.LoadChunkInto(ctx, d, buf)
	}
	if err != nil {
		return media.Chunk{}, err
	}
	if _, err := chunk.CheckCRC(blob); err != nil {
		return media.Chunk{}, fmt.Errorf("chunk %s: %w", d, err)
	}
	c := media.Chunk{Digest: d, Blob: blob}
	if b.into != nil {
		c.Done = func() {
			select {
			case b.free <- blob[:0]:
			default:
			}
		}
	}
	return c, nil
}
