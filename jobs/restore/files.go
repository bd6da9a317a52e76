package restore

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// fileWorker writes file contents, leaving all-zero blocks as holes. Once
// ctx ends it only closes what is still queued.
func (t *treeRestore) fileWorker(ctx context.Context, batches <-chan []fileJob) error {
	buf := make([]byte, 1<<20)
	for batch := range batches {
		for _, j := range batch {
			if ctx.Err() != nil {
				unix.Close(j.fd)
				continue
			}
			if err := t.file(ctx, j, buf); err != nil {
				if ctx.Err() == nil {
					t.fail(j.dir.path(j.name), err)
				}
				continue
			}
			t.count(func(r *TreeReport) { r.Files++ })
			t.opt.Stats.Files.Add(1)
		}
	}
	return ctx.Err()
}

// fileQueue hands created files to the workers in batches: one channel
// operation (and at most one wakeup of a worker) per batch rather than
// per file, which for a tree of small files was a good part of the
// scheduler's work.
type fileQueue struct {
	ch    chan []fileJob
	batch []fileJob
	bytes uint64
}

// A batch goes out at this many files or content bytes, whichever first.
const (
	batchFiles = 16
	batchBytes = 1 << 20
)

func (q *fileQueue) push(ctx context.Context, j fileJob) error {
	q.batch = append(q.batch, j)
	q.bytes += j.e.Size
	if len(q.batch) < batchFiles && q.bytes < batchBytes {
		return nil
	}
	return q.flush(ctx)
}

// flush sends the batch; if ctx ends first, it closes the batch's files.
func (q *fileQueue) flush(ctx context.Context) error {
	if len(q.batch) == 0 {
		return nil
	}
	select {
	case q.ch <- q.batch:
		q.batch, q.bytes = nil, 0
		return nil
	case <-ctx.Done():
		q.discard()
		return ctx.Err()
	}
}

// discard closes the files of a batch that will not be sent.
func (q *fileQueue) discard() {
	for _, j := range q.batch {
		unix.Close(j.fd)
	}
	q.batch, q.bytes = nil, 0
}

// file writes the content and metadata of a created file through its
// descriptor, and closes it.
func (t *treeRestore) file(ctx context.Context, j fileJob, buf []byte) error {
	src, err := t.acc.Open(ctx, j.e)
	var end int64
	if err == nil {
		end, err = copySparse(ctx, j.fd, src, buf, t.opt.Stats)
	}
	if err == nil && end < int64(j.e.Size) {
		if err = unix.Ftruncate(j.fd, int64(j.e.Size)); err != nil { // a hole at the end
			err = fmt.Errorf("truncate: %w", err)
		}
	}
	if err == nil {
		err = t.applyMeta(fdOps(j.fd), &j.e.Metadata, false)
	}
	if cerr := unix.Close(j.fd); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	return err
}

// pwriteFull writes all of b at off.
func pwriteFull(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := unix.Pwrite(fd, b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("write at offset %d: %w", off, err)
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// copySparse copies src to fd, skipping blocks of zeros (they stay holes
// once the file is truncated to its size). It returns the end of the
// last block written.
func copySparse(ctx context.Context, fd int, src *io.SectionReader, buf []byte, st *Stats) (int64, error) {
	var off, end int64
	for {
		if err := ctx.Err(); err != nil {
			return end, err
		}
		n, err := src.ReadAt(buf, off)
		if n > 0 {
			if chunk.IsZero(buf[:n]) {
				st.ZeroBytes.Add(int64(n))
			} else if werr := pwriteFull(fd, buf[:n], off); werr != nil {
				return end, werr
			} else {
				end = off + int64(n)
			}
			st.Bytes.Add(int64(n))
			off += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return end, nil
		}
		if err != nil {
			return end, fmt.Errorf("offset %d: %w", off, err)
		}
	}
}
