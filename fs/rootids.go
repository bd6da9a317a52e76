package fs

import (
	"encoding/binary"
	"runtime"
	"syscall"
	"weak"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Archive roots' node ids. An archive's root is a go-fuse node (treeNode)
// whose lookups and listings the raw layer answers (raw.go), so the raw
// table must know which node id the kernel has for it. It learns that from
// the replies it passes on, as the kernel does: a LOOKUP's EntryOut, and
// each entry of a READDIRPLUS reply (the FUSE wire format of
// fuse.DirEntryList.Bytes). An entry whose inode number is an archive
// root's is that root: go-fuse keeps one node per inode number
// (StableAttr), so whichever node it kept of parallel lookups, the id in
// the reply is the one the kernel holds. The table counts the kernel's
// lookups of the id and drops it at the FORGET that ends them; go-fuse's
// own state is never read.
//
// The trees of archive roots are shared by inode number (rootTrees), so a
// node go-fuse made and then dropped for another (a lost race) opens
// nothing of its own: every node of a root works on the tree the kernel's
// id is registered with. The table holds a tree weakly: it lives while a
// node, a registered id or an entry of it holds it.

// rootRef is a root's node id as the kernel holds it.
type rootRef struct {
	tree    *openTree
	nlookup uint64
}

// sharedTree returns the tree of o's archive that nodes use, o unless a
// node still holds one. (Two archives whose paths hash to one inode
// number would be one node to go-fuse already.)
func (t *rawTable) sharedTree(o *openTree) *openTree {
	ino := inoOf(o.path)
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.rootTrees[ino].Value(); old != nil {
		if old.path != o.path {
			return o
		}
		return old
	}
	t.rootTrees[ino] = weak.Make(o)
	runtime.AddCleanup(o, t.dropRootTree, ino)
	return o
}

// dropRootTree forgets inode ino's tree once nothing holds it.
func (t *rawTable) dropRootTree(ino uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w, ok := t.rootTrees[ino]; ok && w.Value() == nil {
		delete(t.rootTrees, ino)
	}
}

// rootLooked counts a reply giving the kernel node id for an entry of
// inode ino, when that is an archive root.
func (t *rawTable) rootLooked(id, ino uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.roots[id]; r != nil {
		r.nlookup++
		return
	}
	o := t.rootTrees[ino].Value()
	if o == nil {
		return
	}
	t.roots[id] = &rootRef{tree: o, nlookup: 1}
	o.rootRefs++
}

// rootForget applies a FORGET of go-fuse's node id; it returns the tree
// to close once neither the root nor any entry of it is held.
func (t *rawTable) rootForget(id, n uint64) *openTree {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.roots[id]
	if r == nil {
		return nil
	}
	if r.nlookup -= min(n, r.nlookup); r.nlookup > 0 {
		return nil
	}
	delete(t.roots, id)
	delete(t.listings, id)
	o := r.tree
	o.rootRefs--
	if o.rootRefs == 0 && o.rawLive == 0 {
		return o
	}
	return nil
}

// The FUSE wire format of a READDIRPLUS reply (include/uapi/linux/fuse.h):
// per entry a fuse_entry_out (nodeid first, attr.ino at 40), a
// fuse_dirent (namelen at 16, type at 20) and the name, padded to 8
// bytes.
const (
	wireEntryOut = 128
	wireDirent   = 24
	wireAttrIno  = 40
	wireNameLen  = 16
	wireType     = 20
)

// learnRoots counts the archive roots among the entries of b, the
// entries go-fuse added to a READDIRPLUS reply. An entry whose node id
// clashes with the raw table's goes without a node (clash).
func (t *rawTable) learnRoots(b []byte) {
	for len(b) >= wireEntryOut+wireDirent {
		id := binary.NativeEndian.Uint64(b)
		ino := binary.NativeEndian.Uint64(b[wireAttrIno:])
		n := wireEntryOut + wireDirent + int(binary.NativeEndian.Uint32(b[wireEntryOut+wireNameLen:]))
		n = (n + 7) &^ 7
		switch {
		case t.clash(id):
			clear(b[:wireEntryOut])
		case id != 0 && binary.NativeEndian.Uint32(b[wireEntryOut+wireType:]) == syscall.DT_DIR:
			t.rootLooked(id, ino)
		}
		if n > len(b) {
			return
		}
		b = b[n:]
	}
}

// learnLookup counts the root a LOOKUP reply of go-fuse's names, and
// fails one whose node id clashes with the raw table's.
func (t *rawTable) learnLookup(st fuse.Status, out *fuse.EntryOut) fuse.Status {
	switch {
	case st != fuse.OK:
	case t.clash(out.NodeId):
		return fuse.EIO
	case out.NodeId != 0 && out.Attr.Mode&syscall.S_IFMT == syscall.S_IFDIR:
		t.rootLooked(out.NodeId, out.Attr.Ino)
	}
	return st
}

// clash tells whether go-fuse gave id, a node id with the raw table's
// bit, which go-fuse 2.12 never does (rawtable.go) but for its poll
// hack's: a request for it would reach the wrong node, so the kernel
// never gets it, and the mount says why once.
func (t *rawTable) clash(id uint64) bool {
	if !isRawID(id) || id == pollHackID {
		return false
	}
	t.clashOnce.Do(func() {
		if t.log != nil {
			t.log.Error("go-fuse gave a node id with bit 63 set, which cairn's raw table uses: entries go without nodes", "id", id)
		}
	})
	return true
}

// pollHackID is the node id go-fuse gives the file it opens at mount to
// learn whether the kernel polls.
const pollHackID = ^uint64(0)

// count returns the entries below archive roots the kernel holds.
func (t *rawTable) count() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live
}
