package fs

import (
	"context"
	"errors"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// entry is one name of a directory listing: its attributes (type bits and
// inode number included) and how to make its node when it is looked up.
type entry struct {
	name string
	attr fuse.Attr
	make func(attr fuse.Attr) gofs.InodeEmbedder
	// fixed: the entry lives as long as the mount (.stats, .jobs) and
	// keeps the long entry timeout in a listing that changes (.jobs is
	// a mountpoint in split mode: no need to revalidate it every Refresh)
	fixed bool
	// lazy: making the node's attributes costs a load (a file archive's
	// root: its tree is opened); READDIRPLUS leaves it for a LOOKUP
	lazy bool
}

// dir is a directory whose entries come from a listing (listing.go).
type dir struct {
	node
	readOnly
	*listing
}

var (
	_ gofs.NodeLookuper  = (*dir)(nil)
	_ gofs.NodeReaddirer = (*dir)(nil)
	_ gofs.NodeGetattrer = (*dir)(nil)
)

func (f *mountFS) newDir(attr fuse.Attr, what string, ttl time.Duration, list lister) *dir {
	return &dir{node: node{fsys: f, attr: attr}, listing: newListing(what, ttl, list, f.log)}
}

// load returns the current entries (listing.load); the kernel's cached
// entries of names a re-listing found gone or changed are dropped, so
// they do not linger until their entry timeout. That runs in the
// background: invalidating an entry takes the directory's lock in the
// kernel, which a request in flight may hold.
func (d *dir) load(ctx context.Context) ([]entry, error) {
	es, gone, err := d.listing.load(ctx)
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
	if d.ttl == 0 {
		return 0
	}
	if d.isLoaded() {
		_, _ = d.load(ctx) // a failed re-list keeps the previous list
	}
	valid, ch := d.fresh()
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
		return nil, d.fsys.listErr(d.what, err)
	}
	e, ok := find(es, name)
	if !ok {
		return nil, syscall.ENOENT
	}
	ch := d.NewInode(ctx, e.make(e.attr), gofs.StableAttr{Mode: e.attr.Mode & syscall.S_IFMT, Ino: e.attr.Ino})
	out.Attr = e.attr
	if d.ttl > 0 && !e.fixed {
		// A listing that changes (namespaces, groups, snapshots,
		// latest): the kernel asks again after ttl, so a path to a
		// forgotten snapshot stops resolving even when nobody lists
		// its directory. What is below a snapshot never changes and
		// keeps the mount's long timeout.
		out.SetEntryTimeout(min(d.ttl, d.fsys.timeout))
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
		case e.lazy:
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
		return nil, d.fsys.listErr(d.what, err)
	}
	list := make([]fuse.DirEntry, len(es))
	for i, e := range es {
		list[i] = fuse.DirEntry{Name: e.name, Mode: e.attr.Mode, Ino: e.attr.Ino}
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
