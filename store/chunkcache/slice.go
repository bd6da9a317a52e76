package chunkcache

import "context"

// Slice returns the n bytes at off when they lie within one chunk, as a
// slice of the cached chunk (no copy; callers must not modify it) held
// until Release, with the read-ahead and sequential tracking of
// ReadAtContext. ok is false when the range spans chunks or passes the
// end: use ReadAtContext then.
func (r *Reader) Slice(ctx context.Context, off int64, n int) (h Held, ok bool, err error) {
	if off < 0 || n <= 0 || off+int64(n) > r.idx.Size() {
		return Held{}, false, nil
	}
	i := r.idx.Find(off, int(r.hint.Load()))
	d, start, end, err := r.entry(i, off)
	if err != nil {
		return Held{}, true, err
	}
	if off+int64(n) > end {
		return Held{}, false, nil
	}
	seq := r.sequential(off, n)
	stream := seq && n >= streamRead
	if seq {
		r.prefetch(i, stream)
	}
	b, err := r.chunk(ctx, i, d, int(end-start), stream)
	if err != nil {
		return Held{}, true, &ReadError{Path: r.idx.Path(), Offset: off, Digest: d.String(), Err: err}
	}
	r.hint.Store(int64(i))
	return Held{Data: b.data[off-start : off-start+int64(n)], b: b}, true, nil
}
