package restore

import (
	"context"
	"fmt"
	"io"
	"unsafe"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
	"os"
)

// slot is one chunk on its way to an ordered stream.
type slot struct {
	i    int
	data []byte
	zero int64 // bytes of zeros to write instead of data
	done chan struct{}
	err  error
}

// toStream restores in order: workers load chunks in parallel, one
// writer writes them in sequence. At most 2·threads chunks are in flight.
func (r *imageRestore) toStream(ctx context.Context, w io.Writer) error {
	g, ctx := errgroup.WithContext(ctx)
	work := make(chan *slot, r.opt.Threads)
	order := make(chan *slot, 2*r.opt.Threads)
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
	for k := 0; k < r.opt.Threads; k++ {
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
	return g.Wait()
}

func (r *imageRestore) fill(ctx context.Context, s *slot) error {
	_, start, end := r.idx.Chunk(s.i)
	if r.isZero(s.i) {
		s.zero = end - start
		r.opt.Stats.ZeroBytes.Add(s.zero)
		return nil
	}
	var blobBuf []byte // the data aliases it: a fresh one per chunk
	data, damaged, err := r.load(ctx, s.i, &blobBuf)
	if damaged {
		s.zero = end - start
	}
	s.data = data
	return err
}

var zeros = make([]byte, 1<<20)

func (r *imageRestore) writeOrdered(ctx context.Context, w io.Writer, order <-chan *slot) error {
	for s := range order {
		select {
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if s.err != nil {
			return s.err
		}
		n := int64(len(s.data))
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
		r.opt.Stats.Bytes.Add(n + s.zero)
		s.data = nil
	}
	return nil
}

func ioctlRange(f *os.File, req uint, rng *[2]uint64) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), uintptr(req), uintptr(unsafe.Pointer(rng)))
	if errno != 0 {
		return errno
	}
	return nil
}
