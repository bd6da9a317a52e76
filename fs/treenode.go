package fs

import (
	"context"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cairnfs/cairn/store"
	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// openTree is one file archive of a snapshot, opened on first use and
// closed when the kernel forgets its root or at unmount.
type openTree struct {
	fsys  *mountFS
	snap  store.Snapshot
	man   *snapManifest   // which files to read: from the manifest (snapmanifest.go)
	a     store.Archive   // its name and kind as listed
	path  string          // the archive's path in the store: the inode key
	root0 *store.RootAttr // the root's attributes from the snapshot index, if there

	mu   sync.Mutex
	t    ArchiveTree
	root TreeEntry
}

func (o *openTree) get(ctx context.Context) (ArchiveTree, TreeEntry, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.t != nil {
		return o.t, o.root, nil
	}
	m, a, err := o.man.archive(o.a.Name)
	if err != nil {
		return nil, TreeEntry{}, err
	}
	t, err := o.fsys.trees.OpenTree(ctx, a, o.fsys.streamOpener(o.snap, m))
	if err != nil {
		return nil, TreeEntry{}, err
	}
	root, err := t.Root(ctx)
	if err != nil {
		t.Close()
		return nil, TreeEntry{}, err
	}
	if o.root0 == nil {
		o.man.learnedRoot(o.a.Name, root)
	}
	o.t, o.root = t, root
	o.fsys.openTrees.Store(o, true)
	return t, root, nil
}

func (o *openTree) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.t != nil {
		o.t.Close()
		o.t = nil
		o.fsys.openTrees.Delete(o)
	}
}

// closeTrees closes the trees still open at unmount.
func (f *mountFS) closeTrees() {
	f.openTrees.Range(func(k, _ any) bool {
		k.(*openTree).close()
		return true
	})
}

// attrOf is the mount's view of an entry: its own mode, owner, size and
// time, and an inode number from its ID, so hard links share one.
func (o *openTree) attrOf(e TreeEntry) fuse.Attr {
	a := o.fsys.makeAttr(e.Mode, inoOf(o.path, strconv.FormatUint(e.ID, 10)), e.Size, e.Mtime)
	a.Owner = fuse.Owner{Uid: e.UID, Gid: e.GID}
	a.Rdev = uint32(e.Rdev)
	if e.Nlink > 0 {
		a.Nlink = e.Nlink
	}
	return a
}

// treeEntry is a file archive's directory in a snapshot. With its root's
// attributes from the snapshot index, it is listed with them and neither
// a listing nor a stat opens the archive; else its attributes cost
// opening the tree (lazy: READDIRPLUS leaves it to a LOOKUP), which puts
// them in the index for the next mount.
func (f *mountFS) treeEntry(snap store.Snapshot, sm *snapManifest, a *store.ListedArchive, path string) entry {
	o := &openTree{fsys: f, snap: snap, man: sm, a: store.Archive{Name: a.Name, Kind: a.Kind, Size: a.Size}, path: path, root0: a.Root}
	attr, known := o.knownRoot()
	if !known {
		attr = f.makeAttr(modeDir, inoOf(path), 0, snap.Time)
	}
	return entry{name: a.Name, attr: attr, lazy: !known, make: func(at fuse.Attr) gofs.InodeEmbedder {
		return &treeNode{tree: &openTree{fsys: f, snap: snap, man: sm, a: o.a, path: path, root0: o.root0}}
	}}
}

// treeNode is any entry of a file archive; the kernel only calls the
// operations that fit its type. It holds only what names the entry
// (TreeEntry.Ref): its attributes and everything else are decoded from
// the archive again when asked for, so that the kernel's many looked-up
// entries cost little memory.
//
// Its size is the mount's memory per looked-up entry beside go-fuse's
// own: keep it at 192 bytes (a size class; the test in memory_test.go).
type treeNode struct {
	gofs.Inode
	readOnly
	ref  TreeRef // the entry's TreeEntry.Ref; zero for the root
	tree *openTree
	lazy atomic.Pointer[lazyFile] // a file's reader, made at its first read (most entries are never read)

	listing   atomic.Pointer[dirListing] // a directory's last listing (prefill.go)
	counted   atomic.Uint32              // nodeNew, nodeCounted or nodeForgotten (nodecount.go)
	prefilled atomic.Bool                // a file's content went to the page cache
}

// isRoot tells the archive's root, the one node without a Ref.
func (n *treeNode) isRoot() bool { return n.ref == TreeRef{} }

var (
	_ gofs.NodeLookuper    = (*treeNode)(nil)
	_ gofs.NodeReaddirer   = (*treeNode)(nil)
	_ gofs.NodeOpener      = (*treeNode)(nil)
	_ gofs.NodeReader      = (*treeNode)(nil)
	_ gofs.NodeReadlinker  = (*treeNode)(nil)
	_ gofs.NodeGetxattrer  = (*treeNode)(nil)
	_ gofs.NodeListxattrer = (*treeNode)(nil)
	_ gofs.NodeOnForgetter = (*treeNode)(nil)
)

// entry returns the tree and this node's entry, opening the tree if
// this is its root.
func (n *treeNode) entry(ctx context.Context) (ArchiveTree, TreeEntry, error) {
	t, root, err := n.tree.get(ctx)
	if n.isRoot() || err != nil {
		return t, root, err
	}
	e, err := t.Entry(ctx, n.ref)
	return t, e, err
}

// rel is the node's path inside the archive, for log lines.
func (n *treeNode) rel() string {
	var names []string
	for c := n; !c.isRoot(); {
		name, parent := c.Parent()
		if parent == nil {
			break
		}
		p, ok := parent.Operations().(*treeNode)
		if !ok {
			break
		}
		names = append(names, name)
		c = p
	}
	slices.Reverse(names)
	return strings.Join(names, "/")
}

// fail maps an error of the tree to an errno, logging what is not a plain
// "not there" or a cancelled request.
func (n *treeNode) fail(op string, err error) syscall.Errno {
	e := errno(err)
	if e == syscall.EIO {
		n.tree.fsys.log.Error(op+" failed", "snapshot", n.tree.snap.String(), "archive", n.tree.a.Name, "path", "/"+n.rel(), "err", err)
	}
	return e
}

// Getattr returns the entry's attributes, decoded again.
func (n *treeNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if n.isRoot() && n.rootAttrOut(out) { // from the snapshot index (snapmanifest.go)
		return 0
	}
	_, e, err := n.entry(ctx)
	if err != nil {
		return n.fail("getattr", err)
	}
	out.Attr = n.tree.attrOf(e)
	if n.isRoot() {
		out.Attr.Ino = inoOf(n.tree.path)
	}
	return 0
}

func (n *treeNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	t, d, err := n.entry(ctx)
	if err != nil {
		return nil, n.fail("open archive", err)
	}
	ce, err := t.Lookup(ctx, d, name)
	if err != nil {
		return nil, n.fail("lookup", err)
	}
	return n.child(ctx, ce, out), 0
}

// child makes (or finds again, by inode number) the node of ce, an entry
// of this directory, and fills out.
func (n *treeNode) child(ctx context.Context, ce TreeEntry, out *fuse.EntryOut) *gofs.Inode {
	attr := n.tree.attrOf(ce)
	child := &treeNode{tree: n.tree, ref: ce.Ref}
	out.Attr = attr
	in := n.NewInode(ctx, child, gofs.StableAttr{Mode: ce.Mode & syscall.S_IFMT, Ino: attr.Ino})
	n.tree.fsys.treeNodes.made(child)
	return in
}

func (n *treeNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	t, d, err := n.entry(ctx)
	if err != nil {
		return nil, n.fail("open archive", err)
	}
	next, stop := iter.Pull2(t.ReadDir(ctx, d))
	return &treeDirStream{n: n, next: next, stop: stop, list: &listingBuilder{}}, 0
}

// treeDirStream streams a directory of a tree to the kernel.
type treeDirStream struct {
	n       *treeNode
	next    func() (TreeEntry, error, bool)
	stop    func()
	fetched bool
	ok      bool
	e       TreeEntry
	err     error
	list    *listingBuilder // nil once stored
	done    *dirListing     // the listing this stream completed
}

var _ gofs.DirStream = (*treeDirStream)(nil)

func (s *treeDirStream) HasNext() bool {
	if !s.fetched {
		s.e, s.err, s.ok = s.next()
		s.fetched = true
		switch {
		case s.list == nil:
		case s.ok && s.err == nil:
			s.list.add(s.e)
		case !s.ok:
			if l := s.list.done(); l != nil {
				s.n.listing.Store(l)
				s.done = l
			}
			s.list = nil
		}
	}
	return s.ok
}

func (s *treeDirStream) Next() (fuse.DirEntry, syscall.Errno) {
	s.fetched = false
	if s.err != nil {
		s.ok = false
		return fuse.DirEntry{}, s.n.fail("readdir", s.err)
	}
	return fuse.DirEntry{Name: s.e.Name, Mode: s.e.Mode, Ino: s.n.tree.attrOf(s.e).Ino}, 0
}

// lookupCurrent answers READDIRPLUS's lookup of the entry Next just
// returned from that entry, without decoding it (or its directory) again.
func (s *treeDirStream) lookupCurrent(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, bool) {
	if !s.ok || s.err != nil || s.fetched || s.e.Name != name {
		return nil, false
	}
	return s.n.child(ctx, s.e, out), true
}

// Close ends the stream. Only now, at RELEASEDIR, does the kernel surely
// know every entry's inode, as storing pages in the cache needs: a
// READDIRPLUS reply is not yet sent while its entries are looked up.
func (s *treeDirStream) Close() {
	s.stop()
	if p := s.n.tree.fsys.prefill; p != nil && s.done != nil {
		p.listed(s.n, s.done)
	}
}

func (n *treeNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return n.tree.fsys.openMode(ctx, flags, n.open, fuse.FOPEN_KEEP_CACHE)
}

func (n *treeNode) open(ctx context.Context) (gofs.FileHandle, syscall.Errno) {
	t, e, err := n.entry(ctx)
	if err != nil {
		return nil, n.fail("open archive", err)
	}
	tf, err := t.Open(ctx, e)
	if err != nil {
		return nil, n.fail("open", err)
	}
	return &readHandle{fsys: n.tree.fsys, snap: n.tree.snap, archive: n.tree.a.Name, path: "/" + n.rel(),
		r: tf, size: int64(e.Size), closer: tf}, 0
}

func (n *treeNode) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off == 0 && n.tree.fsys.prefill != nil {
		n.tree.fsys.prefill.after(n)
	}
	l := n.lazy.Load()
	if l == nil {
		n.lazy.CompareAndSwap(nil, new(lazyFile))
		l = n.lazy.Load()
	}
	return l.read(ctx, n.tree.fsys, fh, dest, off, n.open)
}

func (n *treeNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	t, e, err := n.entry(ctx)
	if err != nil {
		return nil, n.fail("open archive", err)
	}
	target, err := t.Readlink(ctx, e)
	if err != nil {
		return nil, n.fail("readlink", err)
	}
	return []byte(target), 0
}

func (n *treeNode) xattrs(ctx context.Context) ([]Xattr, syscall.Errno) {
	t, e, err := n.entry(ctx)
	if err != nil {
		return nil, n.fail("open archive", err)
	}
	xs, err := t.Xattrs(ctx, e)
	if err != nil {
		return nil, n.fail("xattrs", err)
	}
	return xs, 0
}

// Getxattr returns one attribute; ERANGE with the size when dest is short.
func (n *treeNode) Getxattr(ctx context.Context, name string, dest []byte) (uint32, syscall.Errno) {
	xs, e := n.xattrs(ctx)
	if e != 0 {
		return 0, e
	}
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

// Listxattr returns the attribute names, each ended by a NUL.
func (n *treeNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	xs, e := n.xattrs(ctx)
	if e != 0 {
		return 0, e
	}
	var b []byte
	for _, x := range xs {
		b = append(append(b, x.Name...), 0)
	}
	if len(dest) < len(b) {
		return uint32(len(b)), syscall.ERANGE
	}
	return uint32(copy(dest, b)), 0
}

// OnForget closes the node's reader, and the tree when the kernel
// forgets the archive's root.
func (n *treeNode) OnForget() {
	if l := n.lazy.Load(); l != nil {
		l.release(n.tree.fsys)
	}
	if n.isRoot() {
		n.tree.close()
	} else {
		n.tree.fsys.treeNodes.forgotten(n)
	}
}
