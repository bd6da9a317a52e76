package restore

import (
	"context"
	"fmt"
	"io"
	"os"
	"unsafe"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// slot is one chunk on its way to an ordered stream.
type slot struct {
	i    int
	buf  buffers // data aliases them; recycled once written
	data []byte
	zero int64 // bytes of zeros to write instead of data
	done chan struct{}
	err  error
}

// toStream restores in order: 2·threads workers load chunks in
// parallel (threads of them decoding at once), one writer writes them in
// sequence. At most 3·threads+2 chunks are in flight: the writer waits
// for the oldest, so more workers would only hold more memory.
func (r *imageRestore) toStream(ctx context.Context, w io.Writer) error {
	g, ctx := errgroup.WithContext(ctx)
	workers := 2 * r.opt.Threads
	work := make(chan *slot, workers)
	order := make(chan *slot, workers+r.opt.Threads)
	// Buffers go back to free once written, so chunks are not loaded
	// into fresh (zeroed) 4 MiB allocations; it holds at most as many as
	// can be in flight.
	r.free = make(chan buffers, cap(order)+2)
	g.Go(func() error {
		defer close(work)
		defer close(order)
		for i := 0; i < r.idx.Len(); i++ {
			s := &slot{i: i, done: make(chan struct{})}
			select {
			case order <- s:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case work <- s:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	for range workers {
		g.Go(func() error {
			for s := range work {
				s.err = r.fill(ctx, s)
				close(s.done)
				if s.err != nil {
					return s.err
				}
			}
			return nil
		})
	}
	g.Go(func() error { return r.writeOrdered(ctx, w, order) })
	err := g.Wait()
	// After a failure: unmap what was loaded and not written (the workers
	// are gone, so a slot not done now never will be).
	for s := range order {
		unmapIfDone(s)
	}
	if r.held != nil {
		unmapIfDone(r.held)
	}
	return err
}

func unmapIfDone(s *slot) {
	select {
	case <-s.done:
		s.buf.done()
	default:
	}
}

func (r *imageRestore) fill(ctx context.Context, s *slot) (err error) {
	_, start, end := r.idx.Chunk(s.i)
	if r.isZero(s.i) {
		s.zero = end - start
		r.opt.Stats.ZeroBytes.Add(s.zero)
		return nil
	}
	select {
	case s.buf = <-r.free:
	default:
	}
	data, damaged, err := r.load(ctx, s.i, &s.buf)
	if damaged {
		s.zero = end - start
	}
	s.data = data
	return err
}

// recycle unmaps a written slot's chunk and hands its buffers back to
// the workers.
func (r *imageRestore) recycle(s *slot) {
	s.buf.done()
	select {
	case r.free <- s.buf:
	default:
	}
	s.buf, s.data = buffers{}, nil
}

var zeros = make([]byte, 1<<20)

func (r *imageRestore) writeOrdered(ctx context.Context, w io.Writer, order <-chan *slot) error {
	for s := range order {
		select {
		case <-s.done:
		case <-ctx.Done():
			r.held = s // toStream unmaps it once the workers are gone
			return ctx.Err()
		}
		err := s.err
		if err == nil {
			err = r.writeSlot(w, s)
		}
		r.recycle(s)
		if err != nil {
			return err
		}
	}
	return nil
}

// writeSlot writes a slot's data, which may be in a mapped chunk file:
// inside its blob's Do.
func (r *imageRestore) writeSlot(w io.Writer, s *slot) error {
	return s.buf.blob.Do(func([]byte) error { return r.writeData(w, s) })
}

func (r *imageRestore) writeData(w io.Writer, s *slot) error {
	if _, err := w.Write(s.data); err != nil {
		return fmt.Errorf("restore: write: %w", err)
	}
	for z := s.zero; z > 0; {
		m := min(z, int64(len(zeros)))
		if _, err := w.Write(zeros[:m]); err != nil {
			return fmt.Errorf("restore: write: %w", err)
		}
		z -= m
	}
	r.opt.Stats.Bytes.Add(int64(len(s.data)) + s.zero)
	return nil
}

func ioctlRange(f *os.File, req uint, rng *[2]uint64) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), uintptr(req), uintptr(unsafe.Pointer(rng)))
	if errno != 0 {
		return errno
	}
	return nil
}
