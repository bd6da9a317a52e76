package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// MaxThreads bounds Options.Threads.
const MaxThreads = 64

// ErrDamaged is returned when chunks could not be restored.
var ErrDamaged = errors.New("archive has damaged chunks")

// Options tune a restore.
type Options struct {
	Threads      int  // workers; default runtime.NumCPU()
	IgnoreErrors bool // write zeros for damaged chunks and go on
	Discard      bool // block devices: discard zero ranges instead of writing zeros
	Stats        *Stats
}

// Stats counts restore progress; fields are updated atomically.
type Stats struct {
	Bytes     atomic.Int64 // bytes restored (data and zeros)
	ZeroBytes atomic.Int64
	Total     atomic.Int64
}

// Damage is a range of the archive that could not be restored.
type Damage struct {
	Offset, Length int64
	Digest         string
	Err            string
}

// Report is what a restore did.
type Report struct {
	Bytes, ZeroBytes int64
	Damaged          []Damage
}

// Target is where an image goes. File targets are written with pwrite by
// all workers at once; stream targets get the bytes in order.
type Target struct {
	File   *os.File  // a regular file or block device
	Stream io.Writer // used when File is nil (stdout)
}

// Loader loads raw chunks into a reusable buffer; *store.Store is one.
type Loader interface {
	LoadChunkInto(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error)
}

var _ Loader = (*store.Store)(nil)

// Image restores the image behind idx from src to t.
func Image(ctx context.Context, idx store.Index, src Loader, t Target, opt Options) (*Report, error) {
	if opt.Threads <= 0 {
		opt.Threads = runtime.NumCPU()
	}
	if opt.Threads > MaxThreads {
		return nil, fmt.Errorf("restore: %d threads, at most %d", opt.Threads, MaxThreads)
	}
	if opt.Stats == nil {
		opt.Stats = new(Stats)
	}
	opt.Stats.Total.Store(idx.Size())
	r := &imageRestore{idx: idx, src: src, opt: opt}
	var err error
	if t.File != nil {
		err = r.toFile(ctx, t.File)
	} else {
		err = r.toStream(ctx, t.Stream)
	}
	rep := &Report{Bytes: opt.Stats.Bytes.Load(), ZeroBytes: opt.Stats.ZeroBytes.Load(), Damaged: r.damaged()}
	if err == nil && len(rep.Damaged) > 0 {
		err = fmt.Errorf("%s: %w: %d ranges written as zeros", idx.Path(), ErrDamaged, len(rep.Damaged))
	}
	return rep, err
}

type imageRestore struct {
	idx store.Index
	src Loader
	opt Options

	mu     sync.Mutex
	damage []Damage
}

func (r *imageRestore) damaged() []Damage {
	r.mu.Lock()
	defer r.mu.Unlock()
	sort.Slice(r.damage, func(i, j int) bool { return r.damage[i].Offset < r.damage[j].Offset })
	return r.damage
}

// zeroDigest returns the digest of an all-zero chunk of the size of
// chunk i, so such chunks are recognised without loading them.
func (r *imageRestore) isZero(i int) bool {
	d, start, end := r.idx.Chunk(i)
	return d == chunk.ZeroDigest(int(end-start))
}

// load fetches, decodes and checks chunk i into buf. A damaged chunk
// gives an error naming the offset, or, with IgnoreErrors, zeros and a
// Damage record.
func (r *imageRestore) load(ctx context.Context, i int, blobBuf *[]byte) ([]byte, bool, error) {
	d, start, end := r.idx.Chunk(i)
	blob, err := r.src.LoadChunkInto(ctx, d, *blobBuf)
	if err == nil {
		*blobBuf = blob
	}
	var buf []byte
	if err == nil {
		buf, err = chunk.DecodeChunk(nil, blob, d, int(end-start)) // plain blobs in place
	}
	if err == nil {
		return buf, false, nil
	}
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	if !r.opt.IgnoreErrors {
		return nil, false, fmt.Errorf("%s: chunk %s at archive offset %d (%d bytes): %w", r.idx.Path(), d, start, end-start, err)
	}
	r.mu.Lock()
	r.damage = append(r.damage, Damage{Offset: start, Length: end - start, Digest: d.String(), Err: err.Error()})
	r.mu.Unlock()
	return nil, true, nil
}

// toFile restores with positional writes from all workers; zero chunks
// are holes (regular files) or zeroed/discarded ranges (block devices).
func (r *imageRestore) toFile(ctx context.Context, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	dev := fi.Mode()&os.ModeDevice != 0
	if !dev {
		// Empty it first: holes must read as zeros, not as old data.
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("restore to %s: %w", f.Name(), err)
		}
		if err := f.Truncate(r.idx.Size()); err != nil {
			return fmt.Errorf("restore to %s: %w", f.Name(), err)
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	next := make(chan int, r.opt.Threads)
	g.Go(func() error {
		defer close(next)
		for i := 0; i < r.idx.Len(); i++ {
			select {
			case next <- i:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	for w := 0; w < r.opt.Threads; w++ {
		g.Go(func() error {
			var blobBuf []byte // reused: no 4 MiB allocation per chunk
			for i := range next {
				if err := r.writeChunk(ctx, f, dev, i, &blobBuf); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return nil
}

func (r *imageRestore) writeChunk(ctx context.Context, f *os.File, dev bool, i int, blobBuf *[]byte) error {
	_, start, end := r.idx.Chunk(i)
	n := end - start
	if r.isZero(i) {
		r.opt.Stats.ZeroBytes.Add(n)
		r.opt.Stats.Bytes.Add(n)
		if dev {
			return zeroRange(f, start, n, r.opt.Discard)
		}
		return nil // a hole of the truncated file
	}
	data, damaged, err := r.load(ctx, i, blobBuf)
	if err != nil {
		return err
	}
	if damaged {
		r.opt.Stats.Bytes.Add(n)
		if dev {
			return zeroRange(f, start, n, false)
		}
		return nil
	}
	if _, err := f.WriteAt(data, start); err != nil {
		return fmt.Errorf("restore to %s at offset %d: %w", f.Name(), start, err)
	}
	r.opt.Stats.Bytes.Add(n)
	return nil
}

// zeroRange zeroes a range of a block device: BLKZEROOUT, or BLKDISCARD
// with discard.
func zeroRange(f *os.File, off, n int64, discard bool) error {
	req := uint(unix.BLKZEROOUT)
	if discard {
		req = unix.BLKDISCARD
	}
	rng := [2]uint64{uint64(off), uint64(n)}
	if err := ioctlRange(f, req, &rng); err != nil {
		if _, werr := f.WriteAt(make([]byte, n), off); werr != nil {
			return fmt.Errorf("zero %s at offset %d: %w", f.Name(), off, werr)
		}
	}
	return nil
}
