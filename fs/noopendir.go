package fs

import (
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// No-opendir mode. The read-only store mount answers OPENDIR with
// ENOSYS: the kernel then stops sending OPENDIR and RELEASEDIR for the
// whole connection (FUSE's no_opendir, Linux 5.1+), two requests fewer
// per directory, and caches every directory's listing in its page cache
// (no_opendir's default is FOPEN_CACHE_DIR|FOPEN_KEEP_CACHE). Listings
// that change (namespaces, groups, snapshots) stay right because their
// attributes expire when the listing becomes stale and their mtime moves
// when it changed (dir.getattr): the mount has CAP_AUTO_INVAL_DATA, with
// which the kernel checks a cached directory's mtime before serving it.
//
// A listing is served by a handle (a listHandle, or a rawDir in a file
// archive), so noOpendirFS opens one for each listing and keeps it
// between the requests of one listing (a directory larger than one reply
// or than the caller's buffer, and the request that finds its end).

// maxKeptDirs bounds the listings kept open between requests (each is
// a directory stream); the oldest is closed first. A variable for tests.
var maxKeptDirs = 64

type noOpendirFS struct {
	fuse.RawFileSystem

	mu   sync.Mutex
	kept []keptDir // oldest first
}

// keptDir is a listing of node whose last reply held the entries after
// offset from up to offset to. It serves a request at to (the next
// entries) or inside that reply: the kernel asks again from the last
// entry its caller took when the caller's buffer was smaller than the
// reply, and the handle answers that (a listHandle from the list it
// holds, a rawDir by moving its listing back).
type keptDir struct {
	node, from, to, fh uint64
}

// OpenDir answers ENOSYS: from then on the kernel opens directories
// without asking.
func (w *noOpendirFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	return fuse.ENOSYS
}

func (w *noOpendirFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return w.list(cancel, in, out, w.RawFileSystem.ReadDir)
}

func (w *noOpendirFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return w.list(cancel, in, out, w.RawFileSystem.ReadDirPlus)
}

type readDirFunc func(<-chan struct{}, *fuse.ReadIn, *fuse.DirEntryList) fuse.Status

// list serves one READDIR(PLUS) through a handle of the node filesystem:
// the listing's kept handle when one continues at this offset, else a
// new one (which seeks to the offset).
func (w *noOpendirFS) list(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList, read readDirFunc) fuse.Status {
	if in.Fh != 0 { // opened before OPENDIR answered ENOSYS
		return read(cancel, in, out)
	}
	fh, ok := w.take(in.NodeId, in.Offset)
	if !ok {
		var oo fuse.OpenOut
		open := fuse.OpenIn{InHeader: in.InHeader, Flags: syscall.O_RDONLY | syscall.O_DIRECTORY}
		if st := w.RawFileSystem.OpenDir(cancel, &open, &oo); st != fuse.OK {
			return st
		}
		fh = oo.Fh
	}
	h := *in
	h.Fh = fh
	st := read(cancel, &h, out)
	if st != fuse.OK || out.Offset == in.Offset { // failed, or at the end
		w.release(in.NodeId, fh)
		return st
	}
	w.keep(keptDir{node: in.NodeId, from: in.Offset, to: out.Offset, fh: fh})
	return st
}

// take removes and returns a kept handle of node's listing that can
// answer a request at off.
func (w *noOpendirFS) take(node, off uint64) (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, k := range w.kept {
		if k.node == node && k.from < off && off <= k.to {
			w.kept = append(w.kept[:i], w.kept[i+1:]...)
			return k.fh, true
		}
	}
	return 0, false
}

// keep keeps k for the listing's next request, closing the oldest kept
// listing when there are too many.
func (w *noOpendirFS) keep(k keptDir) {
	w.mu.Lock()
	var old *keptDir
	if len(w.kept) >= maxKeptDirs {
		o := w.kept[0]
		old = &o
		w.kept = append(w.kept[:0], w.kept[1:]...)
	}
	w.kept = append(w.kept, k)
	w.mu.Unlock()
	if old != nil {
		w.release(old.node, old.fh)
	}
}

func (w *noOpendirFS) release(node, fh uint64) {
	w.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: fuse.InHeader{NodeId: node}, Fh: fh})
}

// Forget closes the node's kept listings first: a directory the kernel
// forgot is listed no more, and its listing's memory goes with it.
func (w *noOpendirFS) Forget(node, nlookup uint64) {
	w.mu.Lock()
	var fhs []uint64
	kept := w.kept[:0]
	for _, k := range w.kept {
		if k.node == node {
			fhs = append(fhs, k.fh)
		} else {
			kept = append(kept, k)
		}
	}
	w.kept = kept
	w.mu.Unlock()
	for _, fh := range fhs {
		w.release(node, fh)
	}
	w.RawFileSystem.Forget(node, nlookup)
}
