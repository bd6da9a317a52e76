package fs

import (
	"context"
	"sync/atomic"
	"syscall"

	"github.com/cairnfs/cairn/fs/layout"
	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Cached listings. What a snapshot holds never changes: its list of
// archives (a snapshot directory) and every directory of its file
// archives. Such directories are opened with FOPEN_CACHE_DIR and
// FOPEN_KEEP_CACHE, so the kernel keeps the listing in the directory's
// page cache and serves a second getdents without READDIR(PLUS). The
// namespace, group and snapshot lists change and are opened without
// them (go-fuse's default handle), so a new snapshot appears.
//
// The read-only store mount goes further: no OPENDIR at all, and every
// listing cached (noopendir.go).

// dirHandle is a directory's handle: go-fuse's own (dirStreamAsFile) is
// unexported, and NodeOpendirHandler, the only way to return open
// flags, must return one.
type dirHandle struct {
	creator func(context.Context) (gofs.DirStream, syscall.Errno)
	lookup  lookupFunc // the node's Lookup
	ds      gofs.DirStream
	pos     uint64 // entries ds returned
	// inval drops the kernel's cached listing of a listing that changes
	// (no-opendir mode caches every listing); nil for the others
	inval     func()
	emptyNext bool // the next Readdirent starts a request: nothing returned since the end or a seek
}

type lookupFunc func(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno)

var (
	_ gofs.FileReaddirenter = (*dirHandle)(nil)
	_ gofs.FileSeekdirer    = (*dirHandle)(nil)
	_ gofs.FileReleasedirer = (*dirHandle)(nil)
	_ gofs.FileLookuper     = (*dirHandle)(nil)
)

// readdirs counts the listings made for the kernel (tests: a cached
// listing makes none).
var readdirs atomic.Int64

// cachedDir answers OPENDIR with a handle over list and the cache flags.
func cachedDir(flags uint32, list func(context.Context) (gofs.DirStream, syscall.Errno), lookup lookupFunc) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0 {
		return nil, 0, syscall.EISDIR
	}
	return &dirHandle{creator: list, lookup: lookup}, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

// Lookup is READDIRPLUS's lookup of the entry just listed (a file
// archive's listings are served on the raw API, rawdir.go).
func (d *dirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return d.lookup(ctx, name, out)
}

func (d *dirHandle) stream(ctx context.Context) syscall.Errno {
	if d.ds != nil {
		return 0
	}
	readdirs.Add(1)
	ds, e := d.creator(ctx)
	if e != 0 {
		return e
	}
	d.ds = ds
	return 0
}

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if e := d.stream(ctx); e != 0 {
		return nil, e
	}
	if !d.ds.HasNext() {
		if d.emptyNext && d.inval != nil {
			// The reply that ends the listing (empty) is being made: the
			// kernel stored the entries before it and marks its cache
			// complete when the reply arrives. Dropping the pages now
			// makes that cache useless, so the next listing asks again.
			d.inval()
		}
		d.emptyNext = true
		return nil, 0
	}
	de, e := d.ds.Next()
	d.pos++
	d.emptyNext = false
	return &de, e
}

// Seekdir: a stream that cannot seek is listed again from the start and
// off entries skipped (offsets count entries: go-fuse numbers them).
func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if e := d.stream(ctx); e != 0 {
		return e
	}
	d.emptyNext = true
	if sd, ok := d.ds.(gofs.FileSeekdirer); ok {
		return sd.Seekdir(ctx, off)
	}
	if off < d.pos {
		d.ds.Close()
		d.ds, d.pos = nil, 0
		if e := d.stream(ctx); e != 0 {
			return e
		}
	}
	for d.pos < off && d.ds.HasNext() {
		if _, e := d.ds.Next(); e != 0 {
			return e
		}
		d.pos++
	}
	return 0
}

func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	if d.ds != nil {
		d.ds.Close()
	}
}

// OpendirHandle: a snapshot directory (ttl 0) is cached by the kernel;
// a listing that changes is not.
func (d *dir) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	h, ff, e := cachedDir(flags, d.Readdir, d.plusLookup)
	if d.TTL() > 0 {
		ff = 0
		if h != nil && d.fsys.noOpen { // no-opendir mode (noopendir.go)
			h.(*dirHandle).inval = func() { d.NotifyContent(0, 0) }
		}
	}
	return h, ff, e
}

// plusLookup is READDIRPLUS's lookup of a listed name. An entry whose
// attributes cost a load (a file archive's root: its first metadata
// chunk) and whose node the kernel does not hold yet goes without
// attributes (an errno leaves its node id 0, and the kernel links no
// entry for it): listing snapshots then opens no archive, and the
// LOOKUP of a name that is used gets the real attributes.
func (d *dir) plusLookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if es, err := d.load(ctx); err == nil {
		if e, ok := layout.Find(es, name); ok && e.Lazy() && d.GetChild(name) == nil {
			return nil, syscall.EAGAIN
		}
	}
	return d.Lookup(ctx, name, out)
}
