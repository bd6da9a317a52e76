package filearchive

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cairnfs/cairn/store/pxar"
)

// Limits of an undecided run: its metadata is held in memory.
const (
	maxHeldMeta = 4 << 20
	maxRunFiles = 1 << 14
)

// holdWriter passes the metadata stream on, or holds it back while a
// run of reused files is undecided: their PAYLOAD_REF offsets are patched
// if the run's chunks are reused. Held bytes sit in fixed-size blocks,
// so holding megabytes copies nothing twice.
type holdWriter struct {
	w       io.Writer
	pos     uint64 // stream offset of the next byte
	holding bool
	start   uint64   // stream offset of blocks[0][0]
	blocks  [][]byte // all full but the last
	free    [][]byte
}

const holdBlock = 256 << 10

func (h *holdWriter) Write(p []byte) (int, error) {
	if !h.holding {
		n, err := h.w.Write(p)
		h.pos += uint64(n)
		return n, err
	}
	n := len(p)
	for len(p) > 0 {
		if k := len(h.blocks); k == 0 || len(h.blocks[k-1]) == holdBlock {
			var b []byte
			if f := len(h.free); f > 0 {
				b, h.free = h.free[f-1][:0], h.free[:f-1]
			} else {
				b = make([]byte, 0, holdBlock)
			}
			h.blocks = append(h.blocks, b)
		}
		last := &h.blocks[len(h.blocks)-1]
		m := copy((*last)[len(*last):holdBlock], p)
		*last = (*last)[:len(*last)+m]
		p = p[m:]
	}
	h.pos += uint64(n)
	return n, nil
}

func (h *holdWriter) hold() {
	if !h.holding {
		h.holding, h.start = true, h.pos
	}
}

// held is the number of bytes held back.
func (h *holdWriter) held() uint64 {
	if !h.holding {
		return 0
	}
	return h.pos - h.start
}

// add adds delta to the little-endian u64 at stream offset at.
func (h *holdWriter) add(at, delta uint64) error {
	if !h.holding || at < h.start || at+8 > h.pos {
		return fmt.Errorf("metadata offset %d not held (holding [%d, %d))", at, h.start, h.pos)
	}
	var v [8]byte
	rel := at - h.start
	for i := range v { // the field may straddle two blocks
		v[i] = h.blocks[(rel+uint64(i))/holdBlock][(rel+uint64(i))%holdBlock]
	}
	binary.LittleEndian.PutUint64(v[:], binary.LittleEndian.Uint64(v[:])+delta)
	for i := range v {
		h.blocks[(rel+uint64(i))/holdBlock][(rel+uint64(i))%holdBlock] = v[i]
	}
	return nil
}

func (h *holdWriter) release() error {
	if !h.holding {
		return nil
	}
	h.holding = false
	var err error
	for _, b := range h.blocks {
		if err == nil {
			_, err = h.w.Write(b)
		}
		if len(h.free) < 16 {
			h.free = append(h.free, b)
		}
	}
	h.blocks = h.blocks[:0]
	return err
}

// pendingFile is a file of an undecided run.
type pendingFile struct {
	path    string
	size    uint64
	patchAt uint64 // metadata offset of its PAYLOAD_REF offset field
	rec     statRecord
}

// run is a sequence of files whose PAYLOAD items lie back to back in
// the previous payload stream, referenced with offsets as if they were
// written anew from newBase; resolve decides between reusing the chunks
// that hold them and reading the files again. A run that starts inside
// the mirror (cont) references its first file where the mirror holds
// it, and needs only the chunks after the mirror.
type run struct {
	active             bool
	cont               bool
	prevStart, prevEnd uint64
	newBase            uint64
	files              []pendingFile
}

// mirror is the range [from, to) of the previous payload stream whose
// chunks were injected last, placed at newFrom of the new stream. While
// nothing else follows them (the payload stream ends at its end), a file
// inside it is referenced there at once, and a run that continues past
// it injects only the chunks after it: runs split by the limits above
// cost no padding and no reading.
type mirror struct {
	from, to, newFrom uint64
}

// inMirror reports whether the mirror is still the end of the new
// payload stream and holds previous offset x.
func (b *builder) inMirror(enc *pxar.Encoder, x uint64) bool {
	m := &b.mirror
	return m.to > m.from && enc.PayloadPosition() == m.newFrom+(m.to-m.from) && x >= m.from && x < m.to
}

// addRef adds a file whose content equals the previous archive's entry
// pe: it is referenced in the mirror, or its PAYLOAD item joins the
// current run (or starts one).
func (b *builder) addRef(ctx context.Context, enc *pxar.Encoder, name, path string, m *pxar.Metadata,
	pe *pxar.Entry, rec statRecord) (pxar.LinkOffset, error) {
	x, _ := pe.PayloadRef()
	end := x + pxar.HeaderSize + pe.Size
	r := &b.run
	if r.active && x != r.prevEnd {
		if err := b.resolveRun(ctx, enc); err != nil {
			return 0, err
		}
	}
	if r.active && (len(r.files) >= cmp.Or(b.opts.runFiles, maxRunFiles) || b.hold.held() >= maxHeldMeta) {
		if err := b.resolveRun(ctx, enc); err != nil {
			return 0, err
		}
	}
	if !r.active && b.inMirror(enc, x) && end <= b.mirror.to {
		return b.addMirrored(enc, name, m, pe, rec)
	}
	if !r.active {
		b.hold.hold()
		*r = run{active: true, prevStart: x, prevEnd: x, newBase: enc.PayloadPosition(), files: r.files[:0]}
		if b.inMirror(enc, x) {
			r.cont, r.newBase = true, b.mirror.newFrom+(x-b.mirror.from)
		}
	}
	off, err := enc.AddFileRef(name, m, r.newBase+(x-r.prevStart), pe.Size)
	if err != nil {
		return 0, err
	}
	rec.ID = uint64(off)
	r.files = append(r.files, pendingFile{path: path, size: pe.Size, patchAt: enc.MetadataPosition() - 16, rec: rec})
	r.prevEnd = end
	b.progress(pe.Size)
	return off, nil
}

// addMirrored references a file that the mirror holds whole.
func (b *builder) addMirrored(enc *pxar.Encoder, name string, m *pxar.Metadata, pe *pxar.Entry, rec statRecord) (pxar.LinkOffset, error) {
	x, _ := pe.PayloadRef()
	off, err := enc.AddFileRef(name, m, b.mirror.newFrom+(x-b.mirror.from), pe.Size)
	if err != nil {
		return 0, err
	}
	rec.ID = uint64(off)
	b.res.ReusedFiles++
	b.res.ReusedBytes += int64(pe.Size)
	b.progress(pe.Size)
	return off, b.stat.add(&rec)
}

// resolve ends the current run (the walk's Finish hook, and before a
// file is written anew).
func (b *builder) resolve(ctx context.Context, enc *pxar.Encoder) error {
	return b.resolveRun(ctx, enc)
}

// resolveRun ends the current run: if the chunks holding it are all in
// the store, they are injected into the payload index and the references
// shifted onto them; otherwise the files are read again (which heals a
// missing chunk). Whether a file's chunks may be reused at all was
// decided before (reusePlan): a run holds only files in chunks the plan
// keeps, and the padding they carry is bounded for the whole snapshot,
// each chunk counted once however many runs inject it.
func (b *builder) resolveRun(ctx context.Context, enc *pxar.Encoder) error {
	r := &b.run
	if !r.active {
		return nil
	}
	r.active = false
	from := r.prevStart
	if r.cont {
		from = b.mirror.to
	}
	chunks, chunkStart, err := b.prev.chunks(from, r.prevEnd)
	if err != nil {
		return err
	}
	if r.cont && chunkStart != from {
		return fmt.Errorf("internal error: mirror ends at %d inside a chunk starting at %d", from, chunkStart)
	}
	var total uint64
	for _, c := range chunks {
		total += uint64(c.Size)
	}
	ok, err := b.present(chunks)
	if err != nil {
		return err
	}
	if ok {
		var shift uint64 // cont: the references are where the chunks go
		if !r.cont {
			shift = r.prevStart - chunkStart
		}
		return b.inject(enc, chunks, chunkStart, total, shift)
	}
	if r.cont { // written anew from newBase on, not in the mirror
		for _, f := range r.files {
			if err := b.hold.add(f.patchAt, b.mirror.to-r.prevStart); err != nil {
				return err
			}
		}
	}
	if err := b.hold.release(); err != nil {
		return err
	}
	for i := range r.files {
		if err := b.rewrite(ctx, enc, &r.files[i]); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) inject(enc *pxar.Encoder, chunks []ChunkRef, chunkStart, total, shift uint64) error {
	if err := enc.Flush(); err != nil {
		return err
	}
	if shift != 0 {
		for _, f := range b.run.files {
			if err := b.hold.add(f.patchAt, shift); err != nil {
				return err
			}
		}
	}
	if err := b.hold.release(); err != nil {
		return err
	}
	if err := b.payload.Inject(chunks); err != nil {
		return err
	}
	at := enc.PayloadPosition()
	if err := enc.AdvancePayload(total); err != nil {
		return err
	}
	if b.run.cont {
		b.mirror.to = chunkStart + total // the chunks follow the mirror
	} else {
		b.mirror = mirror{from: chunkStart, to: chunkStart + total, newFrom: at}
	}
	enc.Reused(b.mirror.newFrom)
	for _, c := range chunks {
		if _, ok := b.injected[c.Digest]; !ok {
			b.injected[c.Digest] = struct{}{}
			b.res.InjectedBytes += int64(c.Size)
		}
	}
	for i := range b.run.files {
		f := &b.run.files[i]
		b.res.ReusedFiles++
		b.res.ReusedBytes += int64(f.size)
		if err := b.stat.add(&f.rec); err != nil {
			return err
		}
	}
	return nil
}

// present reports whether the store still holds every chunk, touching
// each (store.RefreshKnownChunk: they are the base snapshot's, and a GC
// running beside this backup keeps them);
// a missing one makes the run be read again, which heals it.
func (b *builder) present(chunks []ChunkRef) (bool, error) {
	for _, c := range chunks {
		ok, err := b.s.RefreshKnownChunk(&b.touched, c.Digest)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}
