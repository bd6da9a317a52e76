package fs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
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

// lister produces a directory's entries, in any order.
type lister func(ctx context.Context) ([]entry, error)

// dir is a directory whose entries come from a lister, kept sorted by name
// and re-listed when older than ttl (never, when ttl is 0: a snapshot's
// content does not change).
type dir struct {
	node
	readOnly
	what string // for log lines: the path in the store
	list lister
	ttl  time.Duration

	mu      sync.Mutex
	loaded  bool
	at      time.Time
	changed time.Time // when a re-list found other names than before
	entries []entry
}

var (
	_ gofs.NodeLookuper  = (*dir)(nil)
	_ gofs.NodeReaddirer = (*dir)(nil)
	_ gofs.NodeGetattrer = (*dir)(nil)
)

func (f *mountFS) newDir(attr fuse.Attr, what string, ttl time.Duration, list lister) *dir {
	return &dir{node: node{fsys: f, attr: attr}, what: what, list: list, ttl: ttl}
}

// load returns the current entries, listing again when they are stale. A
// failed re-list keeps the previous entries and logs why.
func (d *dir) load(ctx context.Context) ([]entry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loaded && (d.ttl == 0 || time.Since(d.at) < d.ttl) {
		return d.entries, nil
	}
	es, err := d.list(ctx)
	if err != nil {
		if d.loaded {
			d.fsys.log.Warn("listing failed, showing the previous list", "dir", d.what, "err", err)
			return d.entries, nil
		}
		return nil, err
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	if d.loaded {
		d.forgetGone(es)
		if !sameNames(d.entries, es) {
			d.changed = time.Now()
		}
	}
	d.entries, d.loaded, d.at = es, true, time.Now()
	return es, nil
}

// forgetGone tells the kernel to drop its cached entries for names that
// disappeared (a forgotten or pruned snapshot, a removed group) or are
// another inode now (latest, moved), so they do not linger until their
// entry timeout. It runs in the background: invalidating an entry takes
// the directory's lock in the kernel, which a request in flight may hold.
func (d *dir) forgetGone(now []entry) {
	var gone []string
	for _, e := range d.entries {
		if n, ok := find(now, e.name); !ok || n.attr.Ino != e.attr.Ino {
			gone = append(gone, e.name)
		}
	}
	if len(gone) == 0 {
		return
	}
	go func() {
		for _, name := range gone {
			d.NotifyEntry(name)
		}
	}()
}

// sameNames: a and b (sorted) list the same names, types and inode
// numbers, all a cached listing holds.
func sameNames(a, b []entry) bool {
	return slices.EqualFunc(a, b, func(x, y entry) bool {
		return x.name == y.name && x.attr.Ino == y.attr.Ino && x.attr.Mode&syscall.S_IFMT == y.attr.Mode&syscall.S_IFMT
	})
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
	d.mu.Lock()
	loaded := d.loaded
	d.mu.Unlock()
	if loaded {
		_, _ = d.load(ctx) // a failed re-list keeps the previous list
	}
	d.mu.Lock()
	valid := d.ttl
	if d.loaded {
		valid -= time.Since(d.at)
	}
	if ch := d.changed; !ch.IsZero() {
		sec, nsec := uint64(ch.Unix()), uint32(ch.Nanosecond())
		out.Mtime, out.Mtimensec = sec, nsec
		out.Ctime, out.Ctimensec = sec, nsec
	}
	d.mu.Unlock()
	// 0 would be go-fuse's default timeout: at least a millisecond
	out.SetTimeout(max(min(valid, d.fsys.timeout), time.Millisecond))
	return 0
}

func find(es []entry, name string) (entry, bool) {
	i, ok := slices.BinarySearchFunc(es, name, func(e entry, n string) int { return strings.Compare(e.name, n) })
	if !ok {
		return entry{}, false
	}
	return es[i], true
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
