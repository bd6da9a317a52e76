package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Files of the raw table: OPEN (ENOSYS in no-open mode, noopen.go), READ
// through the open handle or the slot's own reader, and every request
// that would change something refused.

// openFile opens r's content, and queues the files after it in its
// directory for prefill (prefill.go).
func (w *rawFS) openFile(ctx context.Context, r rawNode) (gofs.FileHandle, syscall.Errno) {
	t, e, err := entryOf(ctx, r)
	if err != nil {
		return nil, w.fail(r, "open archive", err)
	}
	tf, err := t.Open(ctx, e)
	if err != nil {
		return nil, w.fail(r, "open", err)
	}
	if p := w.f.prefill; p != nil {
		p.after(w.t, r.tree, r.parent, e.Name)
	}
	o := r.tree
	return &readHandle{fsys: w.f, snap: o.snap, archive: o.name, where: func() string { return w.rel(r) },
		r: tf, size: int64(e.Size), closer: tf}, 0
}

func (w *rawFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if !isRawID(in.NodeId) {
		return w.RawFileSystem.Open(cancel, in, out)
	}
	r, st, ok := w.node(in.NodeId)
	if !ok {
		return st
	}
	fh, ff, e := w.f.openMode(reqCtx(&in.InHeader, cancel), in.Flags, func(ctx context.Context) (gofs.FileHandle, syscall.Errno) {
		return w.openFile(ctx, r)
	}, fuse.FOPEN_KEEP_CACHE)
	if e != 0 {
		return fuse.Status(e)
	}
	w.hmu.Lock()
	w.fhNext++
	out.Fh = w.fhNext
	w.files[out.Fh] = fh.(*readHandle)
	w.hmu.Unlock()
	out.OpenFlags = ff
	return fuse.OK
}

func (w *rawFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	if !isRawID(in.NodeId) {
		return w.RawFileSystem.Read(cancel, in, buf)
	}
	ctx := reqCtx(&in.InHeader, cancel)
	if in.Fh != 0 {
		w.hmu.Lock()
		h := w.files[in.Fh]
		w.hmu.Unlock()
		if h == nil {
			return nil, fuse.EBADF
		}
		res, e := h.Read(ctx, buf, int64(in.Offset))
		return res, fuse.Status(e)
	}
	r, st, ok := w.node(in.NodeId)
	if !ok {
		return nil, st
	}
	l := w.t.lazyOf(in.NodeId)
	if l == nil {
		return nil, fuse.Status(syscall.ESTALE)
	}
	res, e := l.read(ctx, w.f, nil, buf, int64(in.Offset), func(ctx context.Context) (gofs.FileHandle, syscall.Errno) {
		return w.openFile(ctx, r)
	})
	return res, fuse.Status(e)
}

// lazyOf returns the reader of file id in no-open mode, made here.
func (t *rawTable) lazyOf(id uint64) *lazyFile {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, _, ok := t.slotOf(id)
	if !ok {
		return nil
	}
	l := t.lazy[s]
	if l == nil {
		l = new(lazyFile)
		t.lazy[s] = l
	}
	return l
}

func (w *rawFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	if !isRawID(in.NodeId) {
		w.RawFileSystem.Release(cancel, in)
		return
	}
	w.hmu.Lock()
	h := w.files[in.Fh]
	delete(w.files, in.Fh)
	w.hmu.Unlock()
	if h != nil {
		h.Release(context.Background())
	}
}

func (w *rawFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	if isRawID(in.NodeId) {
		return fuse.ENOSYS // readOnly.Flush says why
	}
	return w.RawFileSystem.Flush(cancel, in)
}

// Lseek: SEEK_DATA and SEEK_HOLE see a file without holes, as go-fuse
// answers for its nodes.
func (w *rawFS) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	if !isRawID(in.NodeId) {
		return w.RawFileSystem.Lseek(cancel, in, out)
	}
	_, _, e, _, st := w.decoded(cancel, &in.InHeader, "getattr")
	if st != fuse.OK {
		return st
	}
	switch in.Whence {
	case 3: // SEEK_DATA
		if in.Offset >= e.Size {
			return fuse.Status(syscall.ENXIO)
		}
		out.Offset = in.Offset
	case 4: // SEEK_HOLE
		if in.Offset > e.Size {
			return fuse.Status(syscall.ENXIO)
		}
		out.Offset = e.Size
	default:
		return fuse.ENOTSUP
	}
	return fuse.OK
}
