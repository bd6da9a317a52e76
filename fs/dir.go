package fs

import (
	"errors"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/fs/layout"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dir is a directory of the layout: the node that serves its model
// (layout.Dir) to the kernel.
type dir struct {
	node
	*layout.Dir
}

var _ dirNode = (*dir)(nil)

func (f *mountFS) newDir(attr fuse.Attr, d *layout.Dir) *dir {
	return &dir{node: node{fsys: f, attr: attr}, Dir: d}
}

// load returns the current entries (layout.Dir.Load); the kernel's cached
// entries of names a re-listing found gone or changed are dropped, so
// they do not linger until their entry timeout. That runs in the
// background: invalidating an entry takes the directory's lock in the
// kernel, which a request in flight may hold.
func (d *dir) load(c *call) ([]layout.Entry, error) {
	es, gone, err := d.Load(c.ctx)
	if len(gone) > 0 {
		w, id := c.w, c.id
		go func() {
			for _, name := range gone {
				w.notifyEntry(id, name)
			}
		}()
	}
	return es, err
}

// getattr: a listing that changes is listed again when stale, its mtime
// is when it last changed and its attributes expire when it gets stale.
// The kernel, which caches every listing in no-opendir mode, checks the
// mtime before it serves a cached listing from the start (with
// CAP_AUTO_INVAL_DATA) and lists again when it moved.
func (d *dir) getattr(c *call, out *fuse.AttrOut) syscall.Errno {
	out.Attr = d.attr
	if d.TTL() == 0 {
		return 0
	}
	if d.Loaded() {
		_, _ = d.load(c) // a failed re-list keeps the previous list
	}
	valid, ch := d.Fresh()
	if !ch.IsZero() {
		sec, nsec := uint64(ch.Unix()), uint32(ch.Nanosecond())
		out.Mtime, out.Mtimensec = sec, nsec
		out.Ctime, out.Ctimensec = sec, nsec
	}
	// 0 would be the mount's timeout: at least a millisecond
	out.SetTimeout(max(min(valid, d.fsys.timeout), time.Millisecond))
	return 0
}

// lookup finds one entry and makes (or finds again, by inode number) its
// node. With plus (READDIRPLUS), an entry whose attributes cost a load (a
// file archive's root: its first metadata chunk) and whose node the
// kernel does not hold yet goes without a node (an errno leaves its node
// id 0, and the kernel links no entry for it): listing snapshots then
// opens no archive, and the LOOKUP of a name that is used gets the real
// attributes.
func (d *dir) lookup(c *call, name string, out *fuse.EntryOut, plus bool) syscall.Errno {
	es, err := d.load(c)
	if err != nil {
		return d.fsys.listErr(d.Path(), err)
	}
	e, ok := layout.Find(es, name)
	if !ok {
		return syscall.ENOENT
	}
	attr := d.fsys.entryAttr(e)
	mode := attr.Mode & syscall.S_IFMT
	if plus && e.Lazy() && !c.w.t.holds(attr.Ino, mode) {
		return syscall.EAGAIN
	}
	id, n, errno := c.w.lookupObj(c.id, attr.Ino, mode, func() vnode { return d.fsys.makeNode(e, attr) })
	if errno != 0 {
		return errno
	}
	// The node may know better attributes than the listing (the root of
	// a file archive has its own mode, owner and time; a changing
	// listing its mtime), the node the kernel holds already in
	// particular.
	ao := fuse.AttrOut{Attr: attr}
	switch errno := n.getattr(&call{ctx: c.ctx, w: c.w, id: id}, &ao); {
	case errno == 0:
	case e.Lazy():
		// the listing holds only a placeholder (a file archive's root
		// not read yet): the kernel would keep it as the entry's
		// attributes for the mount's timeout
		c.w.Forget(id, 1)
		return errno
	default:
		ao = fuse.AttrOut{Attr: attr}
	}
	c.w.objEntryOut(id, attr.Ino, mode, &ao, out)
	if ttl := d.TTL(); ttl > 0 && e.Kind != layout.KindMount {
		// A listing that changes (namespaces, groups, snapshots,
		// latest): the kernel asks again after ttl, so a path to a
		// forgotten snapshot stops resolving even when nobody lists
		// its directory. What is below a snapshot never changes and
		// keeps the mount's long timeout.
		out.SetEntryTimeout(min(ttl, d.fsys.timeout))
	}
	return 0
}

// list lists the entries.
func (d *dir) list(c *call) ([]fuse.DirEntry, syscall.Errno) {
	es, err := d.load(c)
	if err != nil {
		return nil, d.fsys.listErr(d.Path(), err)
	}
	list := make([]fuse.DirEntry, len(es))
	for i, e := range es {
		list[i] = fuse.DirEntry{Name: e.Name, Mode: e.Mode, Ino: e.Ino}
	}
	return list, 0
}

// listErr logs a failed listing (unless it is a plain "not there" or a
// cancelled request) and maps it to an errno.
func (f *mountFS) listErr(what string, err error) syscall.Errno {
	e := errno(err)
	if e == syscall.EIO && !errors.As(err, new(loggedError)) {
		f.log.Error("listing failed", "dir", what, "err", err)
	}
	return e
}
