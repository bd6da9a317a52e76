package store

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sync/errgroup"
)

// UploadStats counts what an Uploader did. Fields are updated atomically
// while it runs; read them with Snapshot.
type UploadStats struct {
	Bytes      atomic.Int64 // plain bytes submitted
	ZeroBytes  atomic.Int64 // bytes in all-zero chunks
	Chunks     atomic.Int64
	NewChunks  atomic.Int64 // chunks written to the store
	NewBytes   atomic.Int64 // plain bytes of those chunks
	NewStored  atomic.Int64 // their size on disk (blobs)
	KnownBytes atomic.Int64 // bytes of chunks already in the store
}

// UploadTotals is a copy of UploadStats at one moment.
type UploadTotals struct {
	Bytes, ZeroBytes, Chunks, NewChunks, NewBytes, NewStored, KnownBytes int64
}

// Snapshot returns the current counts.
func (u *UploadStats) Snapshot() UploadTotals {
	return UploadTotals{u.Bytes.Load(), u.ZeroBytes.Load(), u.Chunks.Load(), u.NewChunks.Load(),
		u.NewBytes.Load(), u.NewStored.Load(), u.KnownBytes.Load()}
}

// Add adds t's counts (used to total several archives).
func (t *UploadTotals) Add(o UploadTotals) {
	t.Bytes += o.Bytes
	t.ZeroBytes += o.ZeroBytes
	t.Chunks += o.Chunks
	t.NewChunks += o.NewChunks
	t.NewBytes += o.NewBytes
	t.NewStored += o.NewStored
	t.KnownBytes += o.KnownBytes
}

// KnownSet is the set of chunks a backup may assume present (the chunks
// of the previous snapshot's index of the same archive): they are neither
// stat'ed nor written.
type KnownSet map[chunk.Digest]struct{}

// upJob is one chunk moving through the Uploader.
type upJob struct {
	buf  []byte
	zero bool
	d    chunk.Digest
	err  error
	done chan struct{}
}

// Uploader hashes, compresses and inserts chunks on a pool of workers and
// hands their digests to a sink in submission order. Memory is bounded:
// at most 2·workers+2 chunks are in flight.
type Uploader struct {
	s     *Store
	known KnownSet
	sink  func(d chunk.Digest, size int) error
	Stats *UploadStats

	work  chan *upJob
	order chan *upJob
	g     *errgroup.Group
	ctx   context.Context
	// free holds chunk buffers for reuse. Buffers live for the whole
	// upload: a fresh 4 MiB allocation per chunk costs page faults and
	// kernel zeroing that dominate on some machines.
	free chan []byte
}

// NewUploader starts an uploader with workers goroutines (NumCPU when
// workers <= 0). sink is called from one goroutine, in order.
func (s *Store) NewUploader(ctx context.Context, workers int, known KnownSet, stats *UploadStats,
	sink func(d chunk.Digest, size int) error) *Uploader {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if stats == nil {
		stats = new(UploadStats)
	}
	g, ctx := errgroup.WithContext(ctx)
	u := &Uploader{s: s, known: known, sink: sink, Stats: stats, g: g, ctx: ctx,
		work: make(chan *upJob, workers), order: make(chan *upJob, 2*workers+2),
		free: make(chan []byte, 3*workers+4)}
	for i := 0; i < workers; i++ {
		g.Go(u.worker)
	}
	g.Go(u.collect)
	return u
}

// Buffer returns a buffer of capacity at least size for the next chunk.
func (u *Uploader) Buffer(size int) []byte {
	select {
	case b := <-u.free:
		if cap(b) >= size {
			return b[:size]
		}
	default:
	}
	return make([]byte, size)
}

// Recycled returns an empty buffer the Uploader is done with, or nil;
// a writer that builds chunks by appending takes it as its next chunk.
func (u *Uploader) Recycled() []byte {
	select {
	case b := <-u.free:
		return b[:0]
	default:
		return nil
	}
}

// Submit queues the chunk in buf (from Buffer; the Uploader owns it now).
// zero tells that the chunk is known to be all zeros. It blocks while the
// pipeline is full and fails once any chunk failed.
func (u *Uploader) Submit(buf []byte, zero bool) error {
	j := &upJob{buf: buf, zero: zero, done: make(chan struct{})}
	select {
	case u.order <- j:
	case <-u.ctx.Done():
		return context.Cause(u.ctx)
	}
	select {
	case u.work <- j:
		return nil
	case <-u.ctx.Done():
		return context.Cause(u.ctx)
	}
}

// Close waits for every submitted chunk and returns the first error.
func (u *Uploader) Close() error {
	close(u.work)
	close(u.order)
	return u.g.Wait()
}

func (u *Uploader) worker() error {
	var blob []byte
	for j := range u.work {
		j.err = u.process(j, &blob)
		close(j.done)
		if j.err != nil {
			return j.err
		}
	}
	return nil
}

func (u *Uploader) process(j *upJob, blob *[]byte) error {
	st := u.Stats
	n := int64(len(j.buf))
	st.Bytes.Add(n)
	st.Chunks.Add(1)
	if !j.zero && chunk.IsZero(j.buf) {
		j.zero = true
	}
	if j.zero {
		st.ZeroBytes.Add(n)
		j.d = chunk.ZeroDigest(len(j.buf))
	} else {
		j.d = chunk.Sum(j.buf)
	}
	if _, ok := u.known[j.d]; ok {
		st.KnownBytes.Add(n)
		return nil
	}
	if u.s.HasChunk(j.d) {
		st.KnownBytes.Add(n)
		return u.s.TouchChunk(j.d)
	}
	data := j.buf
	if j.zero {
		data = make([]byte, len(j.buf)) // the buffer of a hole holds garbage
	}
	hdr, payload, err := chunk.EncodeBlobParts(*blob, data, true)
	*blob = hdr
	if err != nil {
		return err
	}
	existed, err := u.s.InsertChunkParts(j.d, hdr, payload)
	if err != nil {
		return err
	}
	if existed {
		st.KnownBytes.Add(n)
	} else {
		st.NewChunks.Add(1)
		st.NewBytes.Add(n)
		st.NewStored.Add(int64(len(hdr) + len(payload)))
	}
	return nil
}

func (u *Uploader) collect() error {
	for j := range u.order {
		select {
		case <-j.done:
		case <-u.ctx.Done():
			return context.Cause(u.ctx)
		}
		if j.err != nil {
			return j.err
		}
		if err := u.sink(j.d, len(j.buf)); err != nil {
			return err
		}
		select {
		case u.free <- j.buf:
		default: // more buffers than the pipeline holds: let this one go
		}
	}
	return nil
}
