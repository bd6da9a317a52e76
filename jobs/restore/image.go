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
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// MaxThreads bounds Options.Threads.
const MaxThreads = 64

// ErrDamaged is returned when chunks could not be restored.
var ErrDamaged = errors.New("archive has damaged chunks")

// Options tune a restore.
type Options struct {
	Threads      int  // chunks decoded at once; default runtime.NumCPU()
	IgnoreErrors bool // write zeros for damaged chunks and go on
	Discard      bool // block devices: discard zero ranges instead of writing zeros
	Stats        *Stats
}

// Stats counts restore progress; fields are updated atomically.
type Stats struct {
	Bytes     atomic.Int64 // bytes restored (data and zeros)
	ZeroBytes atomic.Int64
	Total     atomic.Int64
	Files     atomic.Int64 // tree restores: regular files whose content is restored
}

// Damage is a range of the archive that could not be restored.
type Damage struct {
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
	Digest string `json:"digest"`
	Err    string `json:"error"`
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

// Image restores the image behind idx from src (a *store.Store) to t.
// Chunks are read into reused buffers, or mapped where the page cache
// holds their files, which saves the copy. The chunks of an encrypted
// snapshot's index (store.IndexKey) are decrypted with its key, straight
// from the read buffer or mapping into the worker's buffer, and checked
// against their keyed digests.
func Image(ctx context.Context, idx index.Index, src store.ChunkReader, t Target, opt Options) (*Report, error) {
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
	r := &imageRestore{idx: idx, src: src, opt: opt, cpu: make(chan struct{}, opt.Threads), key: chunkcache.IndexKey(idx)}
	var err error
	if t.File != nil {
		err = r.toFile(ctx, t.File)
	} else {
		err = r.toStream(ctx, t.Stream)
	}
	rep := &Report{Bytes: opt.Stats.Bytes.Load(), ZeroBytes: opt.Stats.ZeroBytes.Load(), Damaged: r.damaged()}
	if ierr := idx.Err(); ierr != nil {
		// the index failed while read (cut or faulting): its entries
		// since then were empty, so the image is not whole, even with
		// IgnoreErrors; the index's error says why, not a chunk's
		return rep, fmt.Errorf("restore: %w", ierr)
	}
	if err == nil && len(rep.Damaged) > 0 {
		err = fmt.Errorf("%s: %w: %d ranges written as zeros", idx.Path(), ErrDamaged, len(rep.Damaged))
	}
	return rep, err
}

type imageRestore struct {
	idx index.Index
	src store.ChunkReader
	opt Options
	key *crypt.Key // of an encrypted snapshot's index, else nil

	zeroMu sync.Mutex
	zeros  map[int]chunk.Digest // keyed digests of zero chunks by size

	free chan buffers  // of an ordered restore, for reuse once written
	decs bufStack      // decode buffers the workers of a file restore share
	alis bufStack      // their aligned copies for O_DIRECT (directio.Buf)
	held *slot         // taken by the ordered writer and left when it failed
	cpu  chan struct{} // Threads slots: decoding chunks at once

	mu     sync.Mutex
	damage []Damage
}

func (r *imageRestore) damaged() []Damage {
	r.mu.Lock()
	defer r.mu.Unlock()
	sort.Slice(r.damage, func(i, j int) bool { return r.damage[i].Offset < r.damage[j].Offset })
	return r.damage
}

// isZero tells whether chunk i is all zeros by its digest, so such
// chunks are recognised without loading them: the plain digest of zeros
// of its size, or with a key (an encrypted archive's) the keyed one; a
// signed-only archive has a key and plain chunks.
func (r *imageRestore) isZero(i int) bool {
	d, start, end := r.idx.Chunk(i)
	return d == chunk.ZeroDigest(int(end-start)) || (r.key != nil && d == r.keyedZero(int(end-start)))
}

// keyedZero returns the keyed digest of size zero bytes, computed once
// per size.
func (r *imageRestore) keyedZero(size int) chunk.Digest {
	r.zeroMu.Lock()
	defer r.zeroMu.Unlock()
	d, ok := r.zeros[size]
	if !ok {
		if r.zeros == nil {
			r.zeros = map[int]chunk.Digest{}
		}
		d = r.key.Digest(make([]byte, size))
		r.zeros[size] = d
	}
	return d
}

// decode decodes and checks a chunk's blob: an encrypted one with the
// snapshot's key, decrypted into b.dec; a plain one (also of a
// signed-only archive) in place, or into b.dec when compressed. The
// data's digest is checked, not the blob's CRC (chunk.DecodeChunkData):
// only the data is written.
func (r *imageRestore) decode(b *buffers, blob []byte, d chunk.Digest, size int) ([]byte, error) {
	if b.dec == nil {
		b.dec = r.decs.get() // a file restore's workers share them from here until written
	}
	if kind, _ := chunk.BlobKind(blob); kind == chunk.KindPlain {
		return chunk.DecodeChunkData(nil, blob, d, size, r.key)
	}
	out, err := chunk.DecodeChunkData(b.dec, blob, d, size, r.key)
	if cap(out) > cap(b.dec) {
		b.dec = out[:0]
	}
	return out, err
}

// buffers are a worker's reused chunk buffers: the blob as read, the
// decoded data of a compressed blob, and an aligned copy for O_DIRECT.
// Loaded data aliases blob (the read buffer, or the chunk file's
// mapping until done) or dec; read it inside blob.Do.
type buffers struct {
	raw, dec, aligned []byte
	blob              store.Blob
}

// done ends the life of the loaded data: a mapped chunk file is unmapped.
func (b *buffers) done() { b.blob.Release() }

// load fetches, decodes and checks chunk i into buf. A damaged chunk
// gives an error naming the offset, or, with IgnoreErrors, zeros and a
// Damage record.
func (r *imageRestore) load(ctx context.Context, i int, b *buffers) ([]byte, bool, error) {
	d, start, end := r.idx.Chunk(i)
	blob, err := r.src.ReadChunk(ctx, d, store.ChunkOptions{Buf: b.raw, Map: store.MapCached})
	var buf []byte
	if err == nil {
		if b.blob = blob; !blob.Mapped() {
			b.raw = blob.Bytes()
		}
		r.cpu <- struct{}{}
		err = blob.Do(func(blob []byte) (err error) {
			buf, err = r.decode(b, blob, d, int(end-start))
			return err
		})
		<-r.cpu
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

// ioWorkers is how many workers load and write chunks: while some wait
// for the disk (a chunk file read, an O_DIRECT write), Threads others
// decode; decoding holds a slot of r.cpu. Four per decoder keep reads
// and writes in flight on a virtio disk where two left it idle between
// requests (BenchmarkImageRestore compares); the cap keeps 64 threads
// from holding 256 chunks.
func (r *imageRestore) ioWorkers() int { return min(4*r.opt.Threads, r.opt.Threads+16) }

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
	w := directWriter{f: f}
	if !dev {
		w.direct = openDirect(f)
		defer w.close()
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
	r.decs.max, r.alis.max = r.ioWorkers(), r.ioWorkers()
	for range r.ioWorkers() {
		g.Go(func() error {
			var b buffers // its read buffer is the worker's; dec and aligned are shared (bufStack)
			for i := range next {
				err := r.writeChunk(ctx, w, dev, i, &b)
				r.decs.put(b.dec)
				r.alis.put(b.aligned)
				b.dec, b.aligned = nil, nil
				if err != nil {
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

func (r *imageRestore) writeChunk(ctx context.Context, w directWriter, dev bool, i int, b *buffers) (err error) {
	f := w.f
	_, start, end := r.idx.Chunk(i)
	defer b.done()
	n := end - start
	if r.isZero(i) {
		r.opt.Stats.ZeroBytes.Add(n)
		r.opt.Stats.Bytes.Add(n)
		if dev {
			return zeroRange(f, start, n, r.opt.Discard)
		}
		return nil // a hole of the truncated file
	}
	data, damaged, err := r.load(ctx, i, b)
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
	if b.aligned == nil {
		b.aligned = r.alis.get()
	}
	err = b.blob.Do(func([]byte) error { return w.writeAt(data, start, &b.aligned) })
	if err != nil {
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
