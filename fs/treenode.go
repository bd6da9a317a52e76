package fs

import (
	"context"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/fs/layout"
	"github.com/cairnfs/cairn/store"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// openTree is one file archive of a snapshot, opened on first use and
// closed when the kernel forgets its root or at unmount.
type openTree struct {
	fsys *mountFS
	arch *layout.Archive // which files to read (its manifest), its root's attributes once known
	snap store.Snapshot
	name string // the archive's name in the manifest
	path string // the archive's path in the store: the inode key

	mu   sync.Mutex
	t    ArchiveTree
	root TreeEntry

	// under the raw table's lock (rawtable.go)
	rawIdx   uint32 // index in the table's trees + 1; 0: none
	rawLive  int    // slots of this tree
	rootRefs int    // root nodes holding it (objtable.go)
}

func (o *openTree) get(ctx context.Context) (ArchiveTree, TreeEntry, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.t != nil {
		return o.t, o.root, nil
	}
	m, a, err := o.arch.Man.Archive(o.name)
	if err != nil {
		return nil, TreeEntry{}, err
	}
	// The open is shared and kept: the request that happens to make it
	// must not end it when interrupted (any signal to a process waiting
	// on FUSE sends an INTERRUPT, a child's SIGCHLD too), or its lookup
	// fails with EINTR, which stat(2) passes on to the caller.
	ctx = context.WithoutCancel(ctx)
	t, err := o.fsys.trees.OpenTree(ctx, a, o.fsys.streamOpener(o.snap, m))
	if err != nil {
		return nil, TreeEntry{}, err
	}
	root, err := t.Root(ctx)
	if err != nil {
		t.Close()
		return nil, TreeEntry{}, err
	}
	o.arch.LearnedRoot(store.RootAttr{Mode: root.Mode, UID: root.UID, GID: root.GID,
		Mtime: root.Mtime.UnixNano(), Size: root.Size, Nlink: root.Nlink})
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
	return o.fsys.treeAttr(inoOf(o.path, strconv.FormatUint(e.ID, 10)), e)
}

// treeAttr is entry e of a file archive as inode ino.
func (f *mountFS) treeAttr(ino uint64, e TreeEntry) fuse.Attr {
	a := f.makeAttr(e.Mode, ino, e.Size, e.Mtime)
	a.Owner = fuse.Owner{Uid: e.UID, Gid: e.GID}
	a.Rdev = uint32(e.Rdev)
	if e.Nlink > 0 {
		a.Nlink = e.Nlink
	}
	return a
}

// newTreeNode is the node of a file archive's root (layout.KindTree):
// the tree of archive a (shared with the root's node the kernel held
// before, while it holds entries of it: objtable.go), opened at first
// use. Once the root's attributes are known (layout.Archive.Root: from
// the snapshot index, or read by this mount), neither a listing nor a
// stat opens the archive; before, its attributes cost opening the tree
// (the entry is lazy: READDIRPLUS leaves it to a LOOKUP), which keeps
// them for the rest of the mount and in the index for the next one.
func (f *mountFS) newTreeNode(a *layout.Archive) *treeNode {
	o := &openTree{fsys: f, arch: a, snap: a.Snapshot(), name: a.Name, path: a.Path()}
	return &treeNode{tree: o}
}

// rootEntry is the TreeEntry of a root's attributes from the index.
func rootEntry(r *store.RootAttr) TreeEntry {
	return TreeEntry{Mode: r.Mode, UID: r.UID, GID: r.GID, Size: r.Size, Mtime: time.Unix(0, r.Mtime), Nlink: r.Nlink}
}

// knownRoot is the root's attributes once known (layout.Archive.Root).
func (o *openTree) knownRoot() (fuse.Attr, bool) {
	r := o.arch.Root()
	if r == nil {
		return fuse.Attr{}, false
	}
	return o.fsys.treeAttr(inoOf(o.path), rootEntry(r)), true
}

// treeNode is a file archive's root, a node of its snapshot directory.
// Its lookups, listings and extended attributes are the raw layer's, as
// for every directory of the tree (raw.go); it answers its own
// attributes, known without opening the tree once the snapshot index or
// this mount learned them.
type treeNode struct {
	tree *openTree
}

// getattr returns the root's attributes, with the archive's inode number.
func (n *treeNode) getattr(c *call, out *fuse.AttrOut) syscall.Errno {
	// The attributes known without opening the tree, if they are.
	if a, ok := n.tree.knownRoot(); ok {
		out.Attr = a
		return 0
	}
	_, e, err := n.tree.get(c.ctx)
	if err != nil {
		return n.fail("getattr", err)
	}
	out.Attr = n.tree.attrOf(e)
	out.Attr.Ino = inoOf(n.tree.path)
	return 0
}

// fail maps an error of the tree to an errno, logging what is not a plain
// "not there" or a cancelled request.
func (n *treeNode) fail(op string, err error) syscall.Errno {
	e := errno(err)
	if e == syscall.EIO {
		n.tree.fsys.log.Error(op+" failed", "snapshot", n.tree.snap.String(), "archive", n.tree.name, "path", "/", "err", err)
	}
	return e
}
