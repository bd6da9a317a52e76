package store

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
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
// of the previous snapshot's index of the same archive): they are
// touched, not stat'ed nor written, unless the touch finds them gone.
type KnownSet map[chunk.Digest]struct{}

// touchSlots is the number of digests a TouchFilter holds (32 KiB).
const touchSlots = 1024

// TouchFilter remembers a bounded number of chunks one writer touched or
// wrote since it started, so that a chunk that repeats (the zero chunk
// of an image, a run boundary shared by two reused runs) is touched once
// while the filter holds it. It forgets, never invents: a digest it holds
// was added. The zero value is empty; it is safe for concurrent use.
type TouchFilter struct {
	mu    sync.Mutex
	slots [touchSlots]chunk.Digest // all-zero: empty (no chunk has that SHA-256)
}

func slotOf(d chunk.Digest) int { return int(binary.LittleEndian.Uint16(d[:2])) % touchSlots }

// Has reports whether d was added and is still held. A nil filter holds
// nothing.
func (f *TouchFilter) Has(d chunk.Digest) bool {
	if f == nil || d == (chunk.Digest{}) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.slots[slotOf(d)] == d
}

// Add records d, evicting the digest that shared its slot.
func (f *TouchFilter) Add(d chunk.Digest) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.slots[slotOf(d)] = d
	f.mu.Unlock()
}

// RefreshChunk touches chunk d for a writer that references it without
// storing it, unless filter f holds d already, and adds it to f. Every
// chunk a writer's manifest lists is touched (or written) after the
// writer registered, which keeps it from any GC that runs meanwhile
// (docs/design/gc.md). false, with no error, tells that the chunk is gone
// (a GC removed it): the writer must store it again, or fail rather than
// finish a snapshot that references it.
func (s *Store) RefreshChunk(f *TouchFilter, d chunk.Digest) (bool, error) {
	if f.Has(d) {
		return true, nil
	}
	err := s.TouchChunk(d)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	f.Add(d)
	return true, nil
}

// upJob is one chunk moving through the Uploader.
type upJob struct {
	buf  []byte
	zero bool
	d    chunk.Digest
	err  error
	done chan struct{}
}

// Uploader hashes, compresses and inserts chunks on a pool of workers and
// hands their digests to a sink in submission order. Where the store's
// chunks cost a request each (a remote store) the pool has more
// goroutines than hash/compress workers, so that many requests are in
// flight while at most workers goroutines use a CPU; on a local store it
// has one more, so that a chunk being written to disk leaves no CPU
// idle. Memory is bounded: at most goroutines+workers+2 chunks are in
// flight (2·workers+3 on a local store).
type Uploader struct {
	s       *Store
	known   KnownSet
	touched TouchFilter // chunks touched or written by this Uploader
	sink    func(d chunk.Digest, size int) error
	Stats   *UploadStats

	work  chan *upJob
	order chan *upJob
	cpu   chan struct{} // held while hashing or compressing: workers slots
	g     *errgroup.Group
	ctx   context.Context
	// key encrypts the chunks of an encrypted backup (nil: plain); zeros
	// holds their encrypted all-zero chunks, made once per size.
	key   *crypt.Key
	zeros keyedZeros
	// free holds chunk buffers for reuse. Buffers live for the whole
	// upload: a fresh 4 MiB allocation per chunk costs page faults and
	// kernel zeroing that dominate on some machines.
	free chan []byte
}

// NewUploader starts an uploader with workers hash/compress workers
// (NumCPU when workers <= 0), on more goroutines where the store wants
// more chunk requests in flight. sink is called from one goroutine, in
// order.
func (s *Store) NewUploader(ctx context.Context, workers int, known KnownSet, stats *UploadStats,
	sink func(d chunk.Digest, size int) error) *Uploader {
	return s.NewKeyUploader(ctx, nil, workers, known, stats, sink)
}

// NewKeyUploader is NewUploader for the chunks of an archive encrypted
// with key (nil: plain): they are named by key's digest and stored
// encrypted (uploadkey.go).
func (s *Store) NewKeyUploader(ctx context.Context, key *crypt.Key, workers int, known KnownSet, stats *UploadStats,
	sink func(d chunk.Digest, size int) error) *Uploader {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if stats == nil {
		stats = new(UploadStats)
	}
	n := max(workers+1, s.ioParallelism())
	g, ctx := errgroup.WithContext(ctx)
	u := &Uploader{s: s, known: known, sink: sink, Stats: stats, g: g, ctx: ctx, key: key,
		work: make(chan *upJob, n), order: make(chan *upJob, n+workers+2),
		cpu: make(chan struct{}, workers), free: make(chan []byte, n+2*workers+4)}
	for i := 0; i < n; i++ {
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
	u.cpu <- struct{}{}
	if !j.zero && chunk.IsZero(j.buf) {
		j.zero = true
	}
	if j.zero {
		st.ZeroBytes.Add(n)
	}
	var zero *keyedZero
	var err error
	switch {
	case u.key != nil:
		zero, err = u.nameKey(j)
	case j.zero:
		j.d = chunk.ZeroDigest(len(j.buf))
	default:
		j.d = chunk.Sum(j.buf)
	}
	<-u.cpu
	if err != nil {
		return err
	}
	reused, err := u.reuse(j.d)
	if err != nil {
		return err
	}
	if reused {
		st.KnownBytes.Add(n)
		return nil
	}
	if u.key != nil {
		return u.storeKey(j, zero, blob)
	}
	data := j.buf
	if j.zero {
		data = make([]byte, len(j.buf)) // the buffer of a hole holds garbage
	}
	if want := blobBound(len(data)); cap(*blob) < want {
		*blob = make([]byte, 0, want) // once per worker, not grown by copying chunk after chunk
	}
	u.cpu <- struct{}{}
	hdr, payload, err := chunk.EncodeBlobParts(*blob, data, true)
	<-u.cpu
	*blob = hdr
	if err != nil {
		return err
	}
	return u.insert(j.d, n, hdr, payload)
}

// blobBound is room for the compressed blob of n plain bytes, header
// included: zstd's worst case (ZSTD_COMPRESSBOUND); a blob that would
// not be smaller than n is stored plain anyway.
func blobBound(n int) int { return chunk.BlobHeaderSize + n + n>>8 + 64<<10 }

// insert stores chunk d (n plain bytes) as the blob hdr ‖ payload.
func (u *Uploader) insert(d chunk.Digest, n int64, hdr, payload []byte) error {
	st := u.Stats
	existed, err := u.s.insertMissingChunk(u.ctx, d, hdr, payload)
	if err != nil {
		return err
	}
	u.touched.Add(d)
	if existed {
		st.KnownBytes.Add(n)
	} else {
		st.NewChunks.Add(1)
		st.NewBytes.Add(n)
		st.NewStored.Add(int64(len(hdr) + len(payload)))
	}
	return nil
}

// reuse tells whether chunk d is in the store already (ReuseChunkContext).
// Where storing a chunk looks for it too (Prober.LookFirst false), a
// chunk of no base snapshot is not looked for: false, and insert's
// conditional create finds out.
func (u *Uploader) reuse(d chunk.Digest) (bool, error) {
	if _, known := u.known[d]; !known && !u.touched.Has(d) && !u.s.lookFirst() {
		return false, nil
	}
	return u.s.ReuseChunkContext(u.ctx, u.known, &u.touched, d)
}

// ReuseChunkContext tells whether chunk d is in the store already for a
// writer that references it without storing it, touching it so that it
// outlives any GC running beside the writer (the oldest-writer rule,
// docs/design/gc.md; on a remote store rule 2 of docs/design/store.md). known holds the
// chunks of the writer's base snapshot, f the chunks it touched or wrote
// already (and gets d). A known chunk costs one utimensat, which also
// proves it is there (nothing on a remote store: RefreshKnownChunk);
// another one a stat and the touch (a HEAD, and a touch when it is older
// than the writer, on a remote store); one f holds, nothing. false, with
// no error, means the writer must store the chunk (from the data it
// holds). ctx bounds the requests of a remote store.
func (s *Store) ReuseChunkContext(ctx context.Context, known KnownSet, f *TouchFilter, d chunk.Digest) (bool, error) {
	if f.Has(d) {
		return true, nil
	}
	if _, ok := known[d]; ok {
		return s.RefreshKnownChunk(f, d)
	}
	_, probes := s.backend.(Prober)
	if !probes {
		if has, err := s.HasChunk(ctx, d); err != nil || !has {
			return false, err
		}
		return s.RefreshChunk(f, d)
	}
	err := s.backend.TouchChunk(ctx, d)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	f.Add(d)
	return true, nil
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

// RefreshKnownChunk is RefreshChunk for a chunk of one of the writer's
// base snapshots (an archive's reference, Backup.Reference): a remote store takes it as
// present without a request (rule 2a); a local one touches it.
func (s *Store) RefreshKnownChunk(f *TouchFilter, d chunk.Digest) (bool, error) {
	if _, ok := s.backend.(Prober); ok {
		f.Add(d)
		return true, nil
	}
	return s.RefreshChunk(f, d)
}
