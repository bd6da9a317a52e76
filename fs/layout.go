package fs

import (
	"syscall"

	"github.com/cairnfs/cairn/fs/layout"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// The tree above the archives is package layout's model (what each
// directory holds, latest, the snapshot index, when to list again); this
// file turns its entries into attributes and nodes of the mount (objtable.go).

// newLayout is the model of the mount's tree (options set in Mount).
func (f *mountFS) newLayout() *layout.Layout {
	return &layout.Layout{Store: f.s, Index: f.listIdx, Refresh: f.refresh, Started: f.started,
		FileMode: f.imageMode, Trees: f.trees != nil, Check: f.checkKey, Log: f.log}
}

// entryAttr is the attributes of entry e as the mount shows them.
func (f *mountFS) entryAttr(e layout.Entry) fuse.Attr {
	switch e.Kind {
	case layout.KindFile:
		a := f.makeAttr(e.Mode, e.Ino, e.Size, e.Mtime)
		if data, ok := e.Archive.Data(); ok { // an image's data, learned by a mount (sparse.go)
			a.Blocks = (data + 511) / 512
		}
		return a
	case layout.KindTree:
		if r := e.Archive.Root(); r != nil {
			return f.treeAttr(e.Ino, rootEntry(r))
		}
	}
	return f.makeAttr(e.Mode, e.Ino, e.Size, e.Mtime)
}

// makeNode makes the node of entry e, with attributes attr.
func (f *mountFS) makeNode(e layout.Entry, attr fuse.Attr) vnode {
	switch e.Kind {
	case layout.KindDir:
		return f.newDir(attr, e.Dir())
	case layout.KindLatest:
		return &latestLink{node: node{fsys: f, attr: attr}, target: e.Target}
	case layout.KindFile:
		_, known := e.Archive.Data()
		return &archiveFile{node: node{fsys: f, attr: attr}, arch: e.Archive, blocksKnown: known}
	case layout.KindTree:
		return f.newTreeNode(e.Archive)
	default: // layout.KindMount
		return f.fixed[e.Name]
	}
}

// latestLink points to the newest finished snapshot of its group, as the
// group's listing knew it when it made the node: a node's target never
// changes, because the kernel caches it (its inode number hashes it).
type latestLink struct {
	node
	target string
}

var _ linkNode = (*latestLink)(nil)

// readlink returns the newest snapshot's directory name.
func (l *latestLink) readlink(*call) ([]byte, syscall.Errno) {
	return []byte(l.target), 0
}
