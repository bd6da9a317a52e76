package fs

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/fs/layout"
	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dir is a directory of the layout: the node that serves its model
// (layout.Dir) to the kernel.
type dir struct {
	node
	readOnly
	*layout.Dir
}

var (
	_ gofs.NodeLookuper  = (*dir)(nil)
	_ gofs.NodeReaddirer = (*dir)(nil)
	_ gofs.NodeGetattrer = (*dir)(nil)
)

func (f *mountFS) newDir(attr fuse.Attr, d *layout.Dir) *dir {
	return &dir{node: node{fsys: f, attr: attr}, Dir: d}
}

// load returns the current entries (layout.Dir.Load); the kernel's cached
// entries of names a re-listing found gone or changed are dropped, so
// they do not linger until their entry timeout. That runs in the
// background: invalidating an entry takes the directory's lock in the
// kernel, which a request in flight may hold.
func (d *dir) load(ctx context.Context) ([]layout.Entry, error) {
	es, gone, err := d.Load(ctx)
	if len(gone) > 0 {
		go func() {
			for _, name := range gone {
				d.NotifyEntry(name)
			}
		}()
	}
	return es, err
}

// Getattr: a listing that changes is listed again when stale, its mtime
// is when it last changed and its attributes expire when it gets stale.
// The kernel, which caches every listing in no-opendir mode, checks the
// mtime before it serves a cached listing from the start (with
// CAP_AUTO_INVAL_DATA) and lists again when it moved.
func (d *dir) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Attr = d.attr
	if d.TTL() == 0 {
		return 0
	}
	if d.Loaded() {
		_, _ = d.load(ctx) // a failed re-list keeps the previous list
	}
	valid, ch := d.Fresh()
	if !ch.IsZero() {
		sec, nsec := uint64(ch.Unix()), uint32(ch.Nanosecond())
		out.Mtime, out.Mtimensec = sec, nsec
		out.Ctime, out.Ctimensec = sec, nsec
	}
	// 0 would be go-fuse's default timeout: at least a millisecond
	out.SetTimeout(max(min(valid, d.fsys.timeout), time.Millisecond))
	return 0
}

// Lookup finds one entry and makes (or finds again, by inode number) its
// node.
func (d *dir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	es, err := d.load(ctx)
	if err != nil {
		return nil, d.fsys.listErr(d.Path(), err)
	}
	e, ok := layout.Find(es, name)
	if !ok {
		return nil, syscall.ENOENT
	}
	attr := d.fsys.entryAttr(e)
	ch := d.NewInode(ctx, d.fsys.makeNode(e, attr), gofs.StableAttr{Mode: attr.Mode & syscall.S_IFMT, Ino: attr.Ino})
	out.Attr = attr
	if ttl := d.TTL(); ttl > 0 && e.Kind != layout.KindMount {
		// A listing that changes (namespaces, groups, snapshots,
		// latest): the kernel asks again after ttl, so a path to a
		// forgotten snapshot stops resolving even when nobody lists
		// its directory. What is below a snapshot never changes and
		// keeps the mount's long timeout.
		out.SetEntryTimeout(min(ttl, d.fsys.timeout))
	}
	// A node may know better attributes than the listing (the root of
	// a file archive has its own mode, owner and time; a changing
	// listing its mtime): the node the kernel holds already, if any, as
	// go-fuse keeps that one and drops ch.
	src := ch
	if old := d.GetChild(name); old != nil && old.StableAttr() == ch.StableAttr() {
		src = old
	}
	if g, ok := src.Operations().(gofs.NodeGetattrer); ok {
		var ao fuse.AttrOut
		switch errno := g.Getattr(ctx, nil, &ao); {
		case errno == 0:
			out.Attr = ao.Attr
			out.AttrValid, out.AttrValidNsec = ao.AttrValid, ao.AttrValidNsec
		case e.Lazy():
			// the listing holds only a placeholder (a file archive's
			// root not read yet): the kernel would keep it as the
			// entry's attributes for the mount's timeout
			return nil, errno
		}
	}
	return ch, 0
}

// Readdir lists the entries.
func (d *dir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	es, err := d.load(ctx)
	if err != nil {
		return nil, d.fsys.listErr(d.Path(), err)
	}
	list := make([]fuse.DirEntry, len(es))
	for i, e := range es {
		list[i] = fuse.DirEntry{Name: e.Name, Mode: e.Mode, Ino: e.Ino}
	}
	return gofs.NewListDirStream(list), 0
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
