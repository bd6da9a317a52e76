package fs

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Directories. A directory of the mount's own is listed by its
// listHandle (cachedir.go). A directory of a file archive (its root
// included) never changes: it is opened with FOPEN_CACHE_DIR and
// FOPEN_KEEP_CACHE, and READDIRPLUS makes the entries' slots from what
// the listing decoded, without decoding them again. In no-opendir mode
// noOpendirFS opens and keeps the handles of both.

// rawDir is an open directory: a listing of it, positioned where the
// next request most likely starts. Offsets are the listing's positions
// (DirStream): the entry sent with offset p is followed by the one at p.
// A request elsewhere (the kernel asking again from inside its last
// reply, seekdir) moves the listing there, which costs a lookup, not a
// listing from the start.
type rawDir struct {
	mu      sync.Mutex
	node    rawNode
	s       DirStream // nil: not open (or closed after an error)
	pos     uint64    // the position of the next entry: of ahead, if held
	ahead   *dirItem  // the entry at pos, read but not sent (the last reply was full)
	eof     bool
	err     error           // the stream failed after entries were sent: the next request gets it
	list    *listingBuilder // the first pass's listing, for prefill
	done    *dirListing     // the listing the first pass completed
	started bool
}

// readdirSeeks counts the listings of archive directories moved to
// another position than the one they were at (tests).
var readdirSeeks atomic.Int64

// dirItem is an entry of a listing and the position after it.
type dirItem struct {
	e    TreeEntry
	next uint64
}

func (w *rawFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	r, st, ok := w.node(in.NodeId)
	if !ok {
		return st
	}
	if in.Flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0 {
		return fuse.Status(syscall.EISDIR)
	}
	if r.obj != nil && !r.root {
		d, ok := r.obj.(dirNode)
		if !ok {
			return fuse.Status(syscall.ENOTDIR)
		}
		h, ff, e := d.opendir(w.call(&in.InHeader, cancel))
		if e != 0 {
			return fuse.Status(e)
		}
		h.id = in.NodeId
		out.Fh, out.OpenFlags = w.addHandle(h), ff
		return fuse.OK
	}
	out.Fh = w.addHandle(&rawDir{node: r})
	out.OpenFlags = cachedFlags
	return fuse.OK
}

func (w *rawFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return w.readDir(cancel, in, out, false)
}

func (w *rawFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return w.readDir(cancel, in, out, true)
}

func (w *rawFS) readDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	switch d := w.handle(in.Fh, false).(type) {
	case *rawDir:
		if d.node.nodeID == in.NodeId {
			d.mu.Lock()
			defer d.mu.Unlock()
			return w.serve(d, in.Offset, out, plus)
		}
	case *listHandle:
		if d.id == in.NodeId {
			return fuse.Status(d.serve(w.call(&in.InHeader, cancel), in.Offset, out, plus))
		}
	}
	if in.Fh == 0 {
		return fuse.OK // a directory listed without a handle is empty, as go-fuse's are
	}
	return fuse.EBADF
}

// position opens the directory's listing, unless open, and moves it to
// offset off. Only a listing read from the start without a seek makes
// the directory's listing for prefill.
func (w *rawFS) position(d *rawDir, off uint64) syscall.Errno {
	if d.s != nil && off == d.pos {
		return 0
	}
	if d.s == nil {
		readdirs.Add(1)
		t, dir, err := entryOf(w.f.bg, d.node)
		if err != nil {
			return w.fail(d.node, "open archive", err)
		}
		if d.s, err = t.ReadDir(w.f.bg, dir); err != nil {
			return w.fail(d.node, "readdir", err)
		}
		d.pos = 0
	}
	d.ahead, d.eof, d.err = nil, false, nil
	if off != d.pos {
		readdirSeeks.Add(1)
		d.list = nil
		if err := d.s.Seek(w.f.bg, off); err != nil {
			return w.fail(d.node, "readdir", err)
		}
		d.pos = off
	} else if !d.started {
		d.list = &listingBuilder{}
	}
	d.started = true
	return 0
}

// fetch returns the entry at d.pos; ok false at the end.
func (w *rawFS) fetch(d *rawDir) (dirItem, bool, error) {
	if d.ahead != nil {
		return *d.ahead, true, nil
	}
	if d.eof {
		return dirItem{}, false, nil
	}
	e, next, err := d.s.Next(w.f.bg)
	switch {
	case errors.Is(err, io.EOF):
		d.eof = true
		if d.list != nil {
			if l := d.list.done(); l != nil {
				w.t.setListing(d.node.nodeID, l)
				d.done = l
			}
			d.list = nil
		}
		return dirItem{}, false, nil
	case err != nil:
		return dirItem{}, false, err
	}
	if d.list != nil {
		d.list.add(e)
	}
	d.ahead = &dirItem{e: e, next: next}
	return *d.ahead, true, nil
}

// serve answers a request at offset off: the entries from there on, as
// many as fit.
func (w *rawFS) serve(d *rawDir, off uint64, out *fuse.DirEntryList, plus bool) fuse.Status {
	if err := d.err; err != nil { // the last reply ended early on it
		d.close()
		return fuse.Status(w.fail(d.node, "readdir", err))
	}
	if e := w.position(d, off); e != 0 {
		d.close()
		return fuse.Status(e)
	}
	for first := true; ; first = false {
		it, ok, err := w.fetch(d)
		if err != nil {
			if first {
				d.close()
				return fuse.Status(w.fail(d.node, "readdir", err))
			}
			d.err = err
			return fuse.OK
		}
		if !ok || !w.add(d, &it, out, plus) {
			return fuse.OK
		}
		d.ahead, d.pos = nil, it.next
	}
}

// add adds entry it to the reply; false when it does not fit.
func (w *rawFS) add(d *rawDir, it *dirItem, out *fuse.DirEntryList, plus bool) bool {
	a := rawAttr(d.node.tree, &it.e)
	de := fuse.DirEntry{Name: it.e.Name, Mode: it.e.Mode, Ino: a.Ino, Off: it.next}
	if !plus {
		return out.AddDirEntry(de)
	}
	eo := out.AddDirLookupEntry(de)
	if eo == nil {
		return false
	}
	if w.entryOut(d.node, &it.e, &a, eo) != fuse.OK {
		*eo = fuse.EntryOut{} // no node: the kernel links no entry for it
	}
	return true
}

// close closes the listing; the next request opens it again.
func (d *rawDir) close() {
	if d.s != nil {
		d.s.Close()
	}
	d.s, d.ahead, d.err = nil, nil, nil
}

func (w *rawFS) ReleaseDir(in *fuse.ReleaseIn) {
	d, ok := w.handle(in.Fh, true).(*rawDir)
	if !ok {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.close()
	// Only now, at RELEASEDIR, does the kernel surely know every
	// entry's node, as storing pages in the cache needs.
	if p := w.f.prefill; p != nil && d.done != nil {
		p.listed(d.node.tree, d.node.nodeID, d.done)
	}
}

func (w *rawFS) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	return fuse.ENOTSUP
}

// setListing keeps directory id's listing for prefill while the kernel
// holds the directory.
func (t *rawTable) setListing(id uint64, l *dirListing) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, _, ok := t.slotOf(id); ok {
		t.listings[id] = l
	}
}

// listing returns directory id's last listing.
func (t *rawTable) listing(id uint64) *dirListing {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.listings[id]
}
