package fs

import (
	"context"
	"os/user"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// rawFS serves the entries of file archives below their roots on
// go-fuse's raw API (rawtable.go says why) and passes every other
// request to go-fuse's node filesystem. A request for a raw node id, and
// a lookup or listing in an archive's root (a go-fuse node, registered
// in the table from the reply that gave the kernel its id: rootids.go),
// is answered here; go-fuse never sees a raw id (it would panic on an
// unknown node).
type rawFS struct {
	fuse.RawFileSystem
	f   *mountFS
	t   *rawTable
	srv atomic.Pointer[fuse.Server]

	freeing atomic.Bool // a FreeOSMemory runs

	hmu    sync.Mutex
	fhNext uint64
	files  map[uint64]*readHandle // open files (not in no-open mode)
	dirs   map[uint64]*rawDir     // open directories
}

func newRawFS(inner fuse.RawFileSystem, f *mountFS) *rawFS {
	return &rawFS{RawFileSystem: inner, f: f, t: f.raw, files: map[uint64]*readHandle{}, dirs: map[uint64]*rawDir{}}
}

func (w *rawFS) Init(s *fuse.Server) {
	w.srv.Store(s)
	w.RawFileSystem.Init(s)
}

func reqCtx(h *fuse.InHeader, cancel <-chan struct{}) *fuse.Context {
	return &fuse.Context{Caller: h.Caller, Cancel: cancel}
}

// raw returns the raw node of id; ok is false for go-fuse's nodes
// (archive roots included).
func (w *rawFS) raw(id uint64) (rawNode, bool) {
	if !isRawID(id) {
		return rawNode{}, false
	}
	return w.t.node(id)
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

// attr is what the kernel gets for e: go-fuse's defaults on top of the
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
	r, ok := w.t.node(h.NodeId)
	if !ok {
		return w.t.learnLookup(w.RawFileSystem.Lookup(cancel, h, name, out), out)
	}
	if name == "." || name == ".." {
		return fuse.Status(syscall.ESTALE) // only NFS export asks, which the mount does not offer
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
	if !isRawID(id) {
		w.RawFileSystem.Forget(id, nlookup)
		if o := w.t.rootForget(id, nlookup); o != nil {
			o.close()
		}
		return
	}
	done := w.t.forget(id, nlookup)
	if done.lazy != nil {
		done.lazy.release(w.f)
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
	if !isRawID(in.NodeId) {
		return w.RawFileSystem.GetAttr(cancel, in, out)
	}
	r, _, e, _, st := w.decoded(cancel, &in.InHeader, "getattr")
	if st != fuse.OK {
		return st
	}
	out.Attr = rawAttr(r.tree, &e)
	out.SetTimeout(w.f.timeout)
	return fuse.OK
}

// decoded returns the node of the raw id h names, its tree and its
// entry decoded again, and the request's context.
func (w *rawFS) decoded(cancel <-chan struct{}, h *fuse.InHeader, op string) (rawNode, ArchiveTree, TreeEntry, *fuse.Context, fuse.Status) {
	ctx := reqCtx(h, cancel)
	r, st, ok := w.node(h.NodeId)
	if !ok {
		return r, nil, TreeEntry{}, ctx, st
	}
	t, e, err := entryOf(ctx, r)
	if err != nil {
		return r, nil, TreeEntry{}, ctx, fuse.Status(w.fail(r, op, err))
	}
	return r, t, e, ctx, fuse.OK
}

// node returns the raw node of a request for a raw id; ok false with
// the status to answer when it is not (any more) known.
func (w *rawFS) node(id uint64) (rawNode, fuse.Status, bool) {
	r, ok := w.raw(id)
	if !ok {
		return r, fuse.Status(syscall.ESTALE), false
	}
	return r, fuse.OK, true
}

func (w *rawFS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	if !isRawID(h.NodeId) {
		return w.RawFileSystem.Readlink(cancel, h)
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

// xattrs returns a raw node's extended attributes.
func (w *rawFS) xattrs(cancel <-chan struct{}, h *fuse.InHeader) ([]Xattr, fuse.Status) {
	r, t, e, ctx, st := w.decoded(cancel, h, "open archive")
	if st != fuse.OK {
		return nil, st
	}
	xs, err := t.Xattrs(ctx, e)
	if err != nil {
		return nil, fuse.Status(w.fail(r, "xattrs", err))
	}
	return xs, fuse.OK
}

func (w *rawFS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	if !isRawID(h.NodeId) {
		return w.RawFileSystem.GetXAttr(cancel, h, attr, dest)
	}
	xs, st := w.xattrs(cancel, h)
	if st != fuse.OK {
		return 0, st
	}
	n, e := getXattr(xs, attr, dest)
	return n, fuse.Status(e)
}

func (w *rawFS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	if !isRawID(h.NodeId) {
		return w.RawFileSystem.ListXAttr(cancel, h, dest)
	}
	xs, st := w.xattrs(cancel, h)
	if st != fuse.OK {
		return 0, st
	}
	n, e := listXattr(xs, dest)
	return n, fuse.Status(e)
}

func (w *rawFS) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	if !isRawID(in.NodeId) {
		return w.RawFileSystem.Access(cancel, in)
	}
	r, _, e, _, st := w.decoded(cancel, &in.InHeader, "getattr")
	if st != fuse.OK {
		return st
	}
	if !hasAccess(in.Caller, rawAttr(r.tree, &e), in.Mask) {
		return fuse.EACCES
	}
	return fuse.OK
}

// hasAccess is access(2)'s check of mask (R_OK 4, W_OK 2, X_OK 1) for
// caller against a's owner and mode, as go-fuse makes it for its nodes.
// The mount has default_permissions, under which Linux checks itself and
// sends no ACCESS; this answers like the archive roots should one come.
func hasAccess(c fuse.Caller, a fuse.Attr, mask uint32) bool {
	mask &= 7
	if mask == 0 {
		return true
	}
	if c.Uid == 0 { // execute needs an execute bit, but on a directory
		return mask&1 == 0 || a.Mode&0o111 != 0 || a.Mode&syscall.S_IFMT == syscall.S_IFDIR
	}
	bits := a.Mode
	switch {
	case c.Uid == a.Uid:
		bits = a.Mode >> 6
	case c.Gid == a.Gid, (a.Mode>>3)&mask != a.Mode&mask && inGroup(c.Uid, a.Gid):
		bits = a.Mode >> 3
	}
	return bits&mask == mask
}

// inGroup tells whether uid's supplementary groups hold gid.
func inGroup(uid, gid uint32) bool {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return false
	}
	gs, err := u.GroupIds()
	return err == nil && slices.Contains(gs, strconv.FormatUint(uint64(gid), 10))
}

func (w *rawFS) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	if isRawID(h.NodeId) {
		root := *h
		root.NodeId = fuse.FUSE_ROOT_ID
		h = &root
	}
	return w.RawFileSystem.StatFs(cancel, h, out)
}

func (w *rawFS) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	if isRawID(in.NodeId) {
		return fuse.ENOSYS // as go-fuse answers for its nodes: the kernel asks GETATTR
	}
	return w.RawFileSystem.Statx(cancel, in, out)
}

// getXattr returns one attribute of xs; ERANGE with the size when dest
// is short.
func getXattr(xs []Xattr, name string, dest []byte) (uint32, syscall.Errno) {
	for _, x := range xs {
		if x.Name == name {
			if len(dest) < len(x.Value) {
				return uint32(len(x.Value)), syscall.ERANGE
			}
			return uint32(copy(dest, x.Value)), 0
		}
	}
	return 0, syscall.ENODATA
}

// listXattr returns the names of xs, each ended by a NUL.
func listXattr(xs []Xattr, dest []byte) (uint32, syscall.Errno) {
	var b []byte
	for _, x := range xs {
		b = append(append(b, x.Name...), 0)
	}
	if len(dest) < len(b) {
		return uint32(len(b)), syscall.ERANGE
	}
	return uint32(copy(dest, b)), 0
}

var _ gofs.FileReader = (*readHandle)(nil)
