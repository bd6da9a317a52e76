package fs

import (
	"iter"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Directories of the raw table (and archive roots' listings). A
// directory of a file archive never changes: it is opened with
// FOPEN_CACHE_DIR and FOPEN_KEEP_CACHE (cachedir.go), and in no-opendir
// mode noOpendirFS opens and keeps its handles here as for go-fuse's.
// READDIRPLUS makes the entries' slots from what the listing decoded,
// without decoding them again.

// rawDir is an open directory: a stream of its entries, and the entries
// from the last request's offset on, so that the kernel may ask again
// from inside the last reply. Offsets count entries (the entry at index
// i has offset i+1), as go-fuse numbers them.
type rawDir struct {
	mu      sync.Mutex
	node    rawNode
	next    func() (TreeEntry, error, bool)
	stop    func()
	buf     []TreeEntry // entries from index from on
	from    uint64
	eof     bool
	err     error           // the stream failed after entries were sent: the next request gets it
	list    *listingBuilder // the first pass's listing, for prefill
	done    *dirListing     // the listing the first pass completed
	started bool
}

func (w *rawFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	r, ok := w.t.node(in.NodeId)
	if !ok {
		return w.RawFileSystem.OpenDir(cancel, in, out)
	}
	if in.Flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0 {
		return fuse.Status(syscall.EISDIR)
	}
	w.hmu.Lock()
	w.fhNext++
	out.Fh = w.fhNext
	w.dirs[out.Fh] = &rawDir{node: r}
	w.hmu.Unlock()
	out.OpenFlags = fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	return fuse.OK
}

func (w *rawFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return w.readDir(cancel, in, out, false)
}

func (w *rawFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return w.readDir(cancel, in, out, true)
}

func (w *rawFS) readDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	d, ok := w.dir(in.NodeId, in.Fh)
	if !ok {
		switch {
		case isRawID(in.NodeId) && in.Fh == 0:
			return fuse.OK // go-fuse lists a directory without a handle as empty
		case isRawID(in.NodeId):
			return fuse.EBADF
		case plus:
			return w.RawFileSystem.ReadDirPlus(cancel, in, out)
		}
		return w.RawFileSystem.ReadDir(cancel, in, out)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return w.serve(d, in.Offset, out, plus)
}

// dir returns the open directory fh of node id, if it is one of the
// raw table's (go-fuse numbers its own handles the same way).
func (w *rawFS) dir(id, fh uint64) (*rawDir, bool) {
	w.hmu.Lock()
	defer w.hmu.Unlock()
	d := w.dirs[fh]
	return d, d != nil && d.node.nodeID == id
}

// restart opens the directory's stream again from its start.
func (w *rawFS) restart(d *rawDir) syscall.Errno {
	if d.next != nil {
		d.stop()
	}
	d.next, d.stop, d.buf, d.from, d.eof, d.err = nil, nil, nil, 0, false, nil
	readdirs.Add(1)
	t, dir, err := entryOf(w.f.bg, d.node)
	if err != nil {
		return w.fail(d.node, "open archive", err)
	}
	d.next, d.stop = iter.Pull2(t.ReadDir(w.f.bg, dir))
	if !d.started {
		d.list = &listingBuilder{}
	} else {
		d.list = nil // a listing read again: the first pass made it or gave up
	}
	d.started = true
	return 0
}

// fetch returns the entry at index i (at or after d.from), reading the
// stream on as far as needed; ok false at the end.
func (w *rawFS) fetch(d *rawDir, i uint64) (TreeEntry, bool, error) {
	for i-d.from >= uint64(len(d.buf)) {
		if d.eof {
			return TreeEntry{}, false, nil
		}
		e, err, ok := d.next()
		switch {
		case !ok:
			d.eof = true
			if d.list != nil {
				if l := d.list.done(); l != nil {
					w.t.setListing(d.node.nodeID, l)
					d.done = l
				}
				d.list = nil
			}
			return TreeEntry{}, false, nil
		case err != nil:
			d.eof = true
			return TreeEntry{}, false, err
		}
		if d.list != nil {
			d.list.add(e)
		}
		d.buf = append(d.buf, e)
	}
	return d.buf[i-d.from], true, nil
}

// serve answers a request at offset off: the entries from index off on,
// as many as fit.
func (w *rawFS) serve(d *rawDir, off uint64, out *fuse.DirEntryList, plus bool) fuse.Status {
	if err := d.err; err != nil { // the last reply ended early on it
		d.err = nil
		d.stop()
		d.next = nil
		return fuse.Status(w.fail(d.node, "readdir", err))
	}
	if d.next == nil || off < d.from {
		if e := w.restart(d); e != 0 {
			return fuse.Status(e)
		}
	}
	// Skip to off, keeping the entries from there on.
	for d.from+uint64(len(d.buf)) < off {
		d.from += uint64(len(d.buf))
		d.buf = d.buf[:0]
		if _, ok, err := w.fetch(d, d.from); !ok || err != nil {
			if err != nil {
				return fuse.Status(w.fail(d.node, "readdir", err))
			}
			return fuse.OK // off is past the end
		}
	}
	d.buf = append(d.buf[:0], d.buf[off-d.from:]...)
	d.from = off
	for i := off; ; i++ {
		e, ok, err := w.fetch(d, i)
		if err != nil {
			if i == off {
				return fuse.Status(w.fail(d.node, "readdir", err))
			}
			d.err = err
			return fuse.OK
		}
		if !ok {
			return fuse.OK
		}
		a := rawAttr(d.node.tree, &e)
		de := fuse.DirEntry{Name: e.Name, Mode: e.Mode, Ino: a.Ino, Off: i + 1}
		if !plus {
			if !out.AddDirEntry(de) {
				return fuse.OK
			}
			continue
		}
		eo := out.AddDirLookupEntry(de)
		if eo == nil {
			return fuse.OK
		}
		if w.entryOut(d.node, &e, &a, eo) != fuse.OK {
			*eo = fuse.EntryOut{} // no node: the kernel links no entry for it
		}
	}
}

func (w *rawFS) ReleaseDir(in *fuse.ReleaseIn) {
	d, ok := w.dir(in.NodeId, in.Fh)
	if !ok {
		if !isRawID(in.NodeId) {
			w.RawFileSystem.ReleaseDir(in)
		}
		return
	}
	w.hmu.Lock()
	delete(w.dirs, in.Fh)
	w.hmu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.next != nil {
		d.stop()
	}
	// Only now, at RELEASEDIR, does the kernel surely know every
	// entry's node, as storing pages in the cache needs.
	if p := w.f.prefill; p != nil && d.done != nil {
		p.listed(d.node.tree, d.node.nodeID, d.done)
	}
}

func (w *rawFS) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if isRawID(in.NodeId) {
		return fuse.ENOTSUP
	}
	return w.RawFileSystem.FsyncDir(cancel, in)
}

// setListing keeps directory id's listing for prefill while the kernel
// holds the directory.
func (t *rawTable) setListing(id uint64, l *dirListing) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.roots[id]; ok {
		t.listings[id] = l
	} else if _, _, ok := t.slotOf(id); ok {
		t.listings[id] = l
	}
}

// listing returns directory id's last listing.
func (t *rawTable) listing(id uint64) *dirListing {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.listings[id]
}
