package fs

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// rawFS serves a mount on go-fuse's raw API (fuse.RawFileSystem) from
// the mount's node table (rawtable.go): every request names a node id
// of the table, whose node is an entry of a file archive (served here
// and in rawdir.go and rawfile.go from its tree) or a node of the
// mount's own, a vnode (node.go; objtable.go), whose methods answer. An
// archive's root is both: a vnode for its attributes, a directory of its
// tree for its lookups, listings and extended attributes. Lookup counts
// are the table's, and a node goes at the FORGET that ends them.
// Requests this mount does not serve get go-fuse's default answer
// (ENOSYS), those that would change something EROFS (rawrefuse.go).
type rawFS struct {
	fuse.RawFileSystem // fuse.NewDefaultRawFileSystem: ENOSYS
	f                  *mountFS
	t                  *rawTable
	srv                atomic.Pointer[fuse.Server]

	freeing atomic.Bool // a FreeOSMemory runs

	hmu     sync.Mutex
	fhNext  uint64
	handles map[uint64]any // open files (fileHandle) and directories (*rawDir, *listHandle)
}

// newRawFS serves the nodes of table t of mount f.
func newRawFS(f *mountFS, t *rawTable) *rawFS {
	return &rawFS{RawFileSystem: fuse.NewDefaultRawFileSystem(), f: f, t: t, handles: map[uint64]any{}}
}

func (w *rawFS) String() string { return "cairn" }

func (w *rawFS) Init(s *fuse.Server) { w.srv.Store(s) }

func reqCtx(h *fuse.InHeader, cancel <-chan struct{}) *fuse.Context {
	return &fuse.Context{Caller: h.Caller, Cancel: cancel}
}

// call is a request h to its node (one allocation).
func (w *rawFS) call(h *fuse.InHeader, cancel <-chan struct{}) *call {
	c := &call{w: w, id: h.NodeId, fc: fuse.Context{Caller: h.Caller, Cancel: cancel}}
	c.ctx = &c.fc
	return c
}

// notifyEntry drops the kernel's entry name of directory parent.
func (w *rawFS) notifyEntry(parent uint64, name string) {
	if s := w.srv.Load(); s != nil {
		s.EntryNotify(parent, name)
	}
}

// notifyContent drops the kernel's cached content of node id.
func (w *rawFS) notifyContent(id uint64) {
	if s := w.srv.Load(); s != nil {
		s.InodeNotify(id, 0, 0)
	}
}

// addHandle registers an open file or directory and returns its number.
func (w *rawFS) addHandle(h any) uint64 {
	w.hmu.Lock()
	defer w.hmu.Unlock()
	w.fhNext++
	w.handles[w.fhNext] = h
	return w.fhNext
}

// handle returns open file or directory fh; take removes it.
func (w *rawFS) handle(fh uint64, take bool) any {
	w.hmu.Lock()
	defer w.hmu.Unlock()
	h := w.handles[fh]
	if take {
		delete(w.handles, fh)
	}
	return h
}

// lookupObj counts a lookup of a node of the mount's own (objtable.go).
func (w *rawFS) lookupObj(parent, ino uint64, mode uint32, mk func() vnode) (uint64, vnode, syscall.Errno) {
	id, v, ok := w.t.lookupObj(ino, mode, parent, mk)
	if !ok {
		w.f.log.Error("too many entries looked up", "limit", rawMaxSlots)
		return 0, nil, syscall.ENOMEM
	}
	return id, v, 0
}

// objEntryOut fills out for node id of the mount's own, inode ino of
// file type mode, with the attributes and timeout of ao.
func (w *rawFS) objEntryOut(id, ino uint64, mode uint32, ao *fuse.AttrOut, out *fuse.EntryOut) {
	out.NodeId, out.Generation = id, 0
	out.Attr = ao.Attr
	fixAttr(&out.Attr, ino, mode)
	out.AttrValid, out.AttrValidNsec = ao.AttrValid, ao.AttrValidNsec
	if out.AttrTimeout() == 0 {
		out.SetAttrTimeout(w.f.timeout)
	}
	out.SetEntryTimeout(w.f.timeout)
}

// fixAttr gives a node's attributes its inode number and file type (if
// known), permission bits when it has none, and blocks when it did not
// say, as go-fuse's node API did.
func fixAttr(a *fuse.Attr, ino uint64, mode uint32) {
	if ino != 0 {
		a.Ino = ino
		a.Mode = a.Mode&0o7777 | mode
	}
	if a.Mode&0o7777 == 0 {
		a.Mode |= 0o644
		if a.Mode&syscall.S_IFDIR != 0 {
			a.Mode |= 0o111
		}
	}
	if a.Blksize == 0 {
		a.Blksize = 4096
		a.Blocks = (a.Size + 4095) / 4096 * 8
	}
}

// entryOf returns r's tree and entry, decoded again (the root's from
// the open tree).
func entryOf(ctx context.Context, r rawNode) (ArchiveTree, TreeEntry, error) {
	t, root, err := r.tree.get(ctx)
	if r.root || err != nil {
		return t, root, err
	}
	e, err := t.Entry(ctx, r.ref)
	return t, e, err
}

// rawAttr is what the kernel gets for e: go-fuse's defaults on top of the
// tree's attributes (a mode without permission bits shows 0644).
func rawAttr(o *openTree, e *TreeEntry) fuse.Attr {
	a := o.attrOf(*e)
	if a.Mode&0o7777 == 0 {
		a.Mode |= 0o644
		if a.Mode&syscall.S_IFDIR != 0 {
			a.Mode |= 0o111
		}
	}
	return a
}

// entryOut counts a lookup of e, an entry of directory dir whose
// attributes are a, and fills out.
func (w *rawFS) entryOut(dir rawNode, e *TreeEntry, a *fuse.Attr, out *fuse.EntryOut) fuse.Status {
	id, ok := w.t.lookup(dir.tree, e, dir.nodeID)
	if !ok {
		w.f.log.Error("too many entries looked up", "limit", rawMaxSlots)
		return fuse.Status(syscall.ENOMEM)
	}
	out.NodeId, out.Generation = id, 0
	out.Attr = *a
	out.SetEntryTimeout(w.f.timeout)
	out.SetAttrTimeout(w.f.timeout)
	return fuse.OK
}

// fail maps an error of r's tree to a status, logging what is not a plain
// "not there" or a cancelled request.
func (w *rawFS) fail(r rawNode, op string, err error) syscall.Errno {
	e := errno(err)
	if e == syscall.EIO {
		o := r.tree
		w.f.log.Error(op+" failed", "snapshot", o.snap.String(), "archive", o.name, "path", w.rel(r), "err", err)
	}
	return e
}

// rel is r's path inside its archive, for log lines: each directory above
// it is decoded again.
func (w *rawFS) rel(r rawNode) string {
	ctx := context.Background()
	path := ""
	for depth := 0; !r.root && depth < 4096; depth++ {
		t, e, err := entryOf(ctx, r)
		if err != nil || t == nil {
			return "/?" + path
		}
		path = "/" + e.Name + path
		p, ok := w.t.node(r.parent)
		if !ok {
			break
		}
		r = p
	}
	if path == "" {
		return "/"
	}
	return path
}

func (w *rawFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	r, st, ok := w.node(h.NodeId)
	if !ok {
		return st
	}
	if name == "." || name == ".." {
		return fuse.Status(syscall.ESTALE) // only NFS export asks, which the mount does not offer
	}
	if r.obj != nil && !r.root {
		d, ok := r.obj.(dirNode)
		if !ok {
			return fuse.Status(syscall.ENOTDIR)
		}
		return fuse.Status(d.lookup(w.call(h, cancel), name, out, false))
	}
	ctx := reqCtx(h, cancel)
	t, d, err := entryOf(ctx, r)
	if err != nil {
		return fuse.Status(w.fail(r, "open archive", err))
	}
	ce, err := t.Lookup(ctx, d, name)
	if err != nil {
		return fuse.Status(w.fail(r, "lookup", err))
	}
	a := rawAttr(r.tree, &ce)
	return w.entryOut(r, &ce, &a, out)
}

func (w *rawFS) Forget(id, nlookup uint64) {
	done := w.t.forget(id, nlookup)
	if done.lazy != nil {
		done.lazy.release(w.f)
	}
	if n, ok := done.obj.(forgetNode); ok {
		n.forgotten(w.f)
	}
	if done.tree != nil {
		done.tree.close()
	}
	if done.shrunk && w.freeing.CompareAndSwap(false, true) {
		go func() {
			defer w.freeing.Store(false)
			debug.FreeOSMemory()
		}()
	}
}

func (w *rawFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	if r, ok := w.t.node(in.NodeId); ok && r.obj != nil {
		return fuse.Status(w.objAttr(w.call(&in.InHeader, cancel), r, out))
	}
	r, _, e, _, st := w.decoded(cancel, &in.InHeader, "getattr")
	if st != fuse.OK {
		return st
	}
	out.Attr = rawAttr(r.tree, &e)
	out.SetTimeout(w.f.timeout)
	return fuse.OK
}

// objAttr answers a GETATTR of r, a node of the mount's own.
func (w *rawFS) objAttr(c *call, r rawNode, out *fuse.AttrOut) syscall.Errno {
	if e := r.obj.getattr(c, out); e != 0 {
		return e
	}
	fixAttr(&out.Attr, r.ino, r.mode)
	if out.Timeout() == 0 {
		out.SetTimeout(w.f.timeout)
	}
	return 0
}

// decoded returns the node of the id h names (an entry of a file
// archive, or a root), its tree and its entry decoded again, and the
// request's context.
func (w *rawFS) decoded(cancel <-chan struct{}, h *fuse.InHeader, op string) (rawNode, ArchiveTree, TreeEntry, *fuse.Context, fuse.Status) {
	ctx := reqCtx(h, cancel)
	r, st, ok := w.node(h.NodeId)
	if !ok {
		return r, nil, TreeEntry{}, ctx, st
	}
	if r.tree == nil {
		return r, nil, TreeEntry{}, ctx, fuse.Status(syscall.EINVAL)
	}
	t, e, err := entryOf(ctx, r)
	if err != nil {
		return r, nil, TreeEntry{}, ctx, fuse.Status(w.fail(r, op, err))
	}
	return r, t, e, ctx, fuse.OK
}

// node returns the node of a request's id; ok false with the status to
// answer when it is not (any more) known.
func (w *rawFS) node(id uint64) (rawNode, fuse.Status, bool) {
	r, ok := w.t.node(id)
	if !ok {
		return r, fuse.Status(syscall.ESTALE), false
	}
	return r, fuse.OK, true
}

func (w *rawFS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	if r, ok := w.t.node(h.NodeId); ok && r.obj != nil && !r.root {
		l, ok := r.obj.(linkNode)
		if !ok {
			return nil, fuse.EINVAL
		}
		b, e := l.readlink(w.call(h, cancel))
		return b, fuse.Status(e)
	}
	r, t, e, ctx, st := w.decoded(cancel, h, "open archive")
	if st != fuse.OK {
		return nil, st
	}
	target, err := t.Readlink(ctx, e)
	if err != nil {
		return nil, fuse.Status(w.fail(r, "readlink", err))
	}
	return []byte(target), fuse.OK
}

// StatFs: every node answers with the store's file system (statfs.go).
func (w *rawFS) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	return fuse.Status(w.f.statfs(out))
}
