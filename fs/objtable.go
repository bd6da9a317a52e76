package fs

// The mount's own nodes in the node table (rawtable.go): the layout's
// directories and files, the archives' roots, .stats and .jobs. Each has
// a slot like an entry of a file archive, of tree noTree, keyed by its
// inode number and file type, and its vnode in objs. A lookup of an inode
// the kernel holds already gets that node (so one node per inode, as the
// kernel expects, and a directory's listing state lives on while it is
// held); the kernel's lookups are counted in the slot, and the node goes
// at the FORGET that ends them.
//
// An archive's root has the open tree of its archive (treenode.go). The
// table keeps the open trees of roots by inode number while a root node
// or an entry of the tree is held (rootTrees), so that a root looked up
// again after the kernel forgot it, while it still holds entries below
// it, works on the same tree; the tree is closed when neither is held.

// objNode is the rawNode of vnode v, node id of inode ino (0: as v
// says) and file type mode, found in directory parent.
func objNode(id uint64, v vnode, parent, ino uint64, mode uint32) rawNode {
	r := rawNode{nodeID: id, obj: v, parent: parent, ino: ino, mode: mode}
	if tn, ok := v.(*treeNode); ok {
		r.tree, r.root = tn.tree, true
	}
	return r
}

// lookupObj counts a lookup of the node of inode ino, file type mode,
// found in directory parent, and returns its node id and vnode: the node
// the kernel holds of that inode, or a new one from mk. ok is false when
// the table is full. mk runs under the table's lock: it must only make
// the value.
func (t *rawTable) lookupObj(ino uint64, mode uint32, parent uint64, mk func() vnode) (uint64, vnode, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.find(noTree, ino, mode); ok {
		sl := t.slot(s)
		sl.nlookup++
		return rawID(sl.gen, s), t.objs[s], true
	}
	s, ok := t.alloc()
	if !ok {
		return 0, nil, false
	}
	v := mk()
	if tn, ok := v.(*treeNode); ok {
		tn.tree = t.shareTree(ino, tn.tree)
	}
	*t.slot(s) = rawSlot{id: ino, nlookup: 1, parent: parent, gen: t.nextGen(), tree: noTree, mode: mode}
	t.objs[s] = v
	t.live++
	t.insert(s)
	return rawID(t.gen, s), v, true
}

// holds tells whether the kernel holds a node of inode ino, file type
// mode.
func (t *rawTable) holds(ino uint64, mode uint32) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	_, ok := t.find(noTree, ino, mode)
	return ok
}

// shareTree returns the open tree of the archive root ino if one is
// held, else o, and counts the root node holding it.
func (t *rawTable) shareTree(ino uint64, o *openTree) *openTree {
	if old := t.rootTrees[ino]; old != nil && old.path == o.path {
		o = old
	} else if old == nil {
		t.rootTrees[ino] = o
	}
	o.rootRefs++
	return o
}

// dropObj removes the vnode of slot s, which the kernel forgot; for an
// archive's root, it returns its tree to close when no entry of it is
// held either.
func (t *rawTable) dropObj(s uint32) (vnode, *openTree) {
	v := t.objs[s]
	delete(t.objs, s)
	t.objs = shrunk(t.objs, &t.objHigh)
	tn, ok := v.(*treeNode)
	if !ok {
		return v, nil
	}
	o := tn.tree
	o.rootRefs--
	if o.rootRefs == 0 && o.rawLive == 0 {
		t.dropRootTree(o)
		return v, o
	}
	return v, nil
}

// dropRootTree forgets o as the open tree of its root.
func (t *rawTable) dropRootTree(o *openTree) {
	ino := inoOf(o.path)
	if t.rootTrees[ino] == o {
		delete(t.rootTrees, ino)
	}
}

// count returns the entries below archive roots the kernel holds.
func (t *rawTable) count() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.live - int64(len(t.objs))
}
