package filearchive

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/pxar"
)

// ChunkRef is one chunk of a stored index: its digest and size.
type ChunkRef struct {
	Digest chunk.Digest
	Size   int
}

// StreamOptions tune a StreamWriter.
type StreamOptions struct {
	ChunkSize int // buzhash average, a power of two; default chunk.DefaultChunkSize
	Workers   int // hash/compress workers; default NumCPU
	// Known chunks are taken as present in the store (the previous
	// snapshot's chunks of the same stream).
	Known store.KnownSet
	Stats *store.UploadStats
	// Key encrypts the stream's chunks (store.Backup.Key; nil: plain).
	Key *crypt.Key
}

// StreamWriter is an io.Writer that cuts what is written to it with the
// buzhash chunker, stores the chunks through a store.Uploader (hashed,
// compressed and inserted in parallel) and lists them in a dynamic index.
// Whole chunks of another index can be appended with Inject. Memory is
// bounded by the Uploader's pipeline and one chunk being cut.
//
// Write, SuggestCut, Inject and Close must be called from one goroutine.
type StreamWriter struct {
	path   string
	dw     *index.DynamicWriter
	up     *store.Uploader
	ch     *chunk.Buzhash
	minCut int
	maxCut int // the largest chunk the chunker cuts
	stage  []byte
	pos    uint64
	err    error
	closed bool

	mu        sync.Mutex // guards dw, pending, written against the upload sink
	pending   []injection
	submitted int // chunks handed to the uploader
	written   int // chunks the sink added to dw
	injected  int64
}

// injection is a run of known chunks that goes into the index after the
// first `after` uploaded chunks.
type injection struct {
	after  int
	chunks []ChunkRef
}

var (
	_ io.Writer          = (*StreamWriter)(nil)
	_ pxar.ContentFiller = (*StreamWriter)(nil)
)

// NewStreamWriter starts a stream whose index goes to path (written to a
// temp name and renamed into place by Close).
func NewStreamWriter(ctx context.Context, s *store.Store, path string, opt StreamOptions) (*StreamWriter, error) {
	avg := opt.ChunkSize
	if avg == 0 {
		avg = chunk.DefaultChunkSize
	}
	ch, err := chunk.NewBuzhash(avg)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", path, err)
	}
	dw, err := index.NewDynamicWriter(path)
	if err != nil {
		return nil, err
	}
	// The stage starts small: small streams (metadata, stat table, the
	// payload of an incremental backup) never need a whole maximal chunk.
	// Once it must grow, it grows to the largest chunk at once (grow).
	w := &StreamWriter{path: path, dw: dw, ch: ch, minCut: avg / 4, maxCut: 4 * avg, stage: make([]byte, 0, 64<<10)}
	w.up = s.NewKeyUploader(ctx, opt.Key, opt.Workers, opt.Known, opt.Stats, w.sink)
	return w, nil
}

// Position is the number of bytes in the stream so far, injected chunks
// included.
func (w *StreamWriter) Position() uint64 { return w.pos }

// Err is the first error of a write, injection or upload, which ends the
// stream.
func (w *StreamWriter) Err() error { return w.err }

// Injected is the number of bytes added by Inject.
func (w *StreamWriter) Injected() int64 { return w.injected }

// Write implements io.Writer.
func (w *StreamWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	total := len(p)
	for len(p) > 0 {
		n := w.ch.Scan(p)
		w.grow(cmp.Or(n, len(p)))
		if n == 0 {
			w.stage = append(w.stage, p...)
			w.pos += uint64(len(p))
			break
		}
		w.stage = append(w.stage, p[:n]...)
		w.pos += uint64(n)
		p = p[n:]
		if err := w.cut(); err != nil {
			return total - len(p), err
		}
	}
	return total, nil
}

// grow makes room for n more bytes in the stage. A stage that must grow
// grows to the largest chunk the chunker cuts in one step, not by
// append's doubling: every step of that is fresh memory, and first
// touches of memory (page faults) were a tenth of a backup's CPU time
// on a virtual machine. Stages are recycled (cut), so each buffer grows
// once.
func (w *StreamWriter) grow(n int) {
	if len(w.stage)+n <= cap(w.stage) {
		return
	}
	w.stage = append(make([]byte, 0, max(w.maxCut, len(w.stage)+n)), w.stage...)
}

// Fill implements pxar.ContentFiller: file content is read straight
// into the chunk being cut, where Write would copy it there from the
// caller's buffer. At most n bytes are read, with one Read call, and
// never more than the stage has room for (the largest chunk).
func (w *StreamWriter) Fill(r io.Reader, n int) (int, error, error) {
	if w.err != nil {
		return 0, nil, w.err
	}
	if room := cap(w.stage) - len(w.stage); room < n && cap(w.stage) < w.maxCut {
		w.grow(min(n, w.maxCut-len(w.stage)))
	}
	n = min(n, cap(w.stage)-len(w.stage))
	if n <= 0 {
		return 0, nil, nil
	}
	start := len(w.stage)
	k, rerr := r.Read(w.stage[start : start+n])
	if k < 0 || k > n {
		k, rerr = 0, fmt.Errorf("read returned %d bytes of %d", k, n)
	}
	w.stage = w.stage[:start+k]
	for len(w.stage) > start {
		c := w.ch.Scan(w.stage[start:])
		if c == 0 {
			w.pos += uint64(len(w.stage) - start)
			break
		}
		w.pos += uint64(c)
		if err := w.cutAt(start + c); err != nil {
			return k, rerr, err
		}
		start = 0 // the rest of the read begins the next stage
	}
	return k, rerr, nil
}

// cut submits the chunk being cut, if any.
func (w *StreamWriter) cut() error {
	if len(w.stage) == 0 {
		return nil
	}
	return w.cutAt(len(w.stage))
}

// cutAt submits the stage's first end bytes as a chunk; the bytes after
// them begin the next stage.
func (w *StreamWriter) cutAt(end int) error {
	// The stage itself goes to the uploader, and a buffer it is done
	// with becomes the next stage: no copy of the stream's bytes.
	// A stage smaller than the chunk just cut would grow again by
	// copying (a tenth of a backup's CPU time on Go's tree): the next one
	// starts at least as large.
	buf, rest := w.stage[:end], w.stage[end:]
	w.stage = w.up.Recycled()
	if cap(w.stage) < cap(buf) {
		w.stage = make([]byte, 0, cap(buf))
	}
	w.stage = append(w.stage, rest...) // before buf goes: the uploader may reuse it
	w.mu.Lock()
	w.submitted++
	w.mu.Unlock()
	if err := w.up.Submit(buf, false); err != nil {
		w.err = fmt.Errorf("stream %s: %w", w.path, err)
		return w.err
	}
	return nil
}

// SuggestCut ends the current chunk here if it has reached the minimum
// chunk size (a quarter of the average), as PBS's payload chunker does at
// the start of each file: chunks then tend to begin where files begin, so
// that a later backup can reuse them with little padding.
func (w *StreamWriter) SuggestCut() error {
	if w.err != nil {
		return w.err
	}
	if len(w.stage) < w.minCut {
		return nil
	}
	w.ch.Reset()
	return w.cut()
}

// Inject ends the current chunk (whatever its size) and appends chunks,
// which must be in the store, to the index as they are.
func (w *StreamWriter) Inject(chunks []ChunkRef) error {
	if w.err != nil {
		return w.err
	}
	w.ch.Reset()
	if err := w.cut(); err != nil {
		return err
	}
	var n int64
	for _, c := range chunks {
		if c.Size <= 0 {
			return fmt.Errorf("stream %s: injected chunk %s of size %d", w.path, c.Digest, c.Size)
		}
		n += int64(c.Size)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written == w.submitted && len(w.pending) == 0 {
		if err := w.addAll(chunks); err != nil {
			w.err = err
			return err
		}
	} else {
		w.pending = append(w.pending, injection{after: w.submitted, chunks: chunks})
	}
	w.pos += uint64(n)
	w.injected += n
	return nil
}

func (w *StreamWriter) addAll(chunks []ChunkRef) error {
	for _, c := range chunks {
		if err := w.dw.Add(c.Digest, c.Size); err != nil {
			return err
		}
	}
	return nil
}

// sink adds uploaded chunk number w.written to the index, after the
// injections that precede it. The Uploader calls it in order.
func (w *StreamWriter) sink(d chunk.Digest, size int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.drain(w.written); err != nil {
		return err
	}
	w.written++
	return w.dw.Add(d, size)
}

// drain adds the pending injections placed after at most n uploaded
// chunks.
func (w *StreamWriter) drain(n int) error {
	k := 0
	for ; k < len(w.pending) && w.pending[k].after <= n; k++ {
		if err := w.addAll(w.pending[k].chunks); err != nil {
			return err
		}
	}
	w.pending = w.pending[k:]
	return nil
}

// Close stores the last chunk, waits for the uploads and writes the
// index. It returns the index checksum and the stream size.
func (w *StreamWriter) Close() (csum [32]byte, size int64, err error) {
	if w.closed {
		return csum, 0, fmt.Errorf("stream %s: closed twice", w.path)
	}
	w.closed = true
	err = w.err
	if err == nil {
		err = w.cut()
	}
	if uerr := w.up.Close(); err == nil && uerr != nil {
		err = fmt.Errorf("stream %s: %w", w.path, uerr)
	}
	if err == nil {
		w.mu.Lock()
		err = w.drain(w.submitted)
		w.mu.Unlock()
	}
	if err != nil {
		w.dw.Abort()
		return csum, 0, err
	}
	csum, size, err = w.dw.Close()
	if err == nil && uint64(size) != w.pos {
		err = fmt.Errorf("stream %s: index holds %d bytes, %d were written", w.path, size, w.pos)
	}
	return csum, size, err
}

// Abort stops the uploads and removes the unfinished index; after Close
// it does nothing.
func (w *StreamWriter) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	if w.err == nil {
		w.err = fmt.Errorf("stream %s: aborted", w.path)
	}
	w.up.Close()
	w.dw.Abort()
}
