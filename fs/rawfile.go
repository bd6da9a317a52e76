package fs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Files: OPEN (ENOSYS in no-open mode, noopen.go), READ through the open
// handle or, without one, the node's own reader (a slot's lazyFile for an
// entry of a file archive), LSEEK.

// openFile opens r's content, and queues the files after it in its
// directory for prefill (prefill.go).
func (w *rawFS) openFile(ctx context.Context, r rawNode) (fileHandle, syscall.Errno) {
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
	r, st, ok := w.node(in.NodeId)
	if !ok {
		return st
	}
	var fh fileHandle
	var ff uint32
	var e syscall.Errno
	c := w.call(&in.InHeader, cancel)
	switch n := r.obj.(type) {
	case nil:
		fh, ff, e = w.f.openMode(c.ctx, in.Flags, func(ctx context.Context) (fileHandle, syscall.Errno) {
			return w.openFile(ctx, r)
		}, fuse.FOPEN_KEEP_CACHE)
	case fileNode:
		fh, ff, e = n.open(c, in.Flags)
	default:
		e = syscall.EISDIR
	}
	if e != 0 {
		return fuse.Status(e)
	}
	if fh != nil {
		out.Fh = w.addHandle(fh)
	}
	out.OpenFlags = ff
	return fuse.OK
}

func (w *rawFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	if in.Fh != 0 {
		h, ok := w.handle(in.Fh, false).(fileHandle)
		if !ok {
			return nil, fuse.EBADF
		}
		res, e := h.Read(reqCtx(&in.InHeader, cancel), buf, int64(in.Offset))
		return res, fuse.Status(e)
	}
	c := w.call(&in.InHeader, cancel)
	r, st, ok := w.node(in.NodeId)
	if !ok {
		return nil, st
	}
	switch n := r.obj.(type) {
	case nil:
	case fileNode:
		res, e := n.read(c, buf, int64(in.Offset))
		return res, fuse.Status(e)
	default:
		return nil, fuse.Status(syscall.EISDIR)
	}
	l := w.t.lazyOf(in.NodeId)
	if l == nil {
		return nil, fuse.Status(syscall.ESTALE)
	}
	res, e := l.read(c.ctx, w.f, buf, int64(in.Offset), func(ctx context.Context) (fileHandle, syscall.Errno) {
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
	if h, ok := w.handle(in.Fh, true).(handleReleaser); ok {
		h.Release(context.Background())
	}
}

// Flush answers ENOSYS: nothing is ever buffered for writing here, and
// the kernel stops sending FLUSH on every close once it hears ENOSYS,
// which saves a round trip per file for tar, cp and rsync.
func (w *rawFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	return fuse.ENOSYS
}

// Lseek: SEEK_DATA and SEEK_HOLE from a node that knows its holes (an
// image: sparse.go); every other file is seen without holes, as go-fuse
// answers for its nodes.
func (w *rawFS) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	var size uint64
	if r, ok := w.t.node(in.NodeId); ok && r.obj != nil {
		c := w.call(&in.InHeader, cancel)
		if s, ok := r.obj.(seekNode); ok {
			off, e := s.lseek(c, in.Offset, in.Whence)
			out.Offset = off
			return fuse.Status(e)
		}
		var ao fuse.AttrOut
		if e := w.objAttr(c, r, &ao); e != 0 {
			return fuse.Status(e)
		}
		size = ao.Size
	} else {
		_, _, e, _, st := w.decoded(cancel, &in.InHeader, "getattr")
		if st != fuse.OK {
			return st
		}
		size = e.Size
	}
	return seekWithoutHoles(in, out, size)
}

// seekWithoutHoles answers SEEK_DATA and SEEK_HOLE in a file of size
// bytes without holes.
func seekWithoutHoles(in *fuse.LseekIn, out *fuse.LseekOut, size uint64) fuse.Status {
	switch in.Whence {
	case seekData:
		if in.Offset >= size {
			return fuse.Status(syscall.ENXIO)
		}
		out.Offset = in.Offset
	case seekHole:
		if in.Offset > size {
			return fuse.Status(syscall.ENXIO)
		}
		out.Offset = size
	default:
		return fuse.ENOTSUP
	}
	return fuse.OK
}
