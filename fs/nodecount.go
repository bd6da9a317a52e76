package fs

import (
	"reflect"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
)

// Archive roots' node ids. go-fuse (2.12) gives a node its id when it is
// made, and the root's OnAdd registers that id with the raw table before
// the LOOKUP that made it is answered. But go-fuse registers the node a
// Lookup returns only after the Lookup, and when another request
// registered a node of the same entry first (parallel lookups of the same
// name, or a lookup again once the entry's timeout ran out), it keeps
// that one and drops the new node, whose id the kernel never sees and
// which is never forgotten. So a new root stays pending until it is seen
// registered (Inode.Forgotten false); one still unregistered after
// loserAge lost, and its id is dropped.

const loserAge = time.Second

type pendingRoot struct {
	n    *treeNode
	id   uint64
	made int64 // Unix ns
}

// inodeID is the node id go-fuse gave in (go-fuse does not export it;
// TestInodeID checks that this reads it).
func inodeID(in *gofs.Inode) uint64 {
	return reflect.ValueOf(in).Elem().FieldByIndex(nodeIDField).Uint()
}

// nodeIDField is where go-fuse's Inode keeps its node id, looked up once
// (a root's every GETATTR reads it). A go-fuse without it cannot serve
// archive trees: the mount fails at start rather than at the first root.
var nodeIDField = func() []int {
	f, ok := reflect.TypeFor[gofs.Inode]().FieldByName("nodeId")
	if !ok || f.Type.Kind() != reflect.Uint64 {
		panic("fs: go-fuse's Inode has no nodeId uint64 field; archive roots cannot be routed (see nodecount.go)")
	}
	return f.Index
}()

// addRoot registers root n under its node id, unless it is.
func (t *rawTable) addRoot(n *treeNode) {
	id := inodeID(&n.Inode)
	if id == 0 {
		return
	}
	t.mu.Lock()
	if t.roots[id] == n {
		t.mu.Unlock()
		return
	}
	t.roots[id] = n
	t.pending = append(t.pending, pendingRoot{n: n, id: id, made: time.Now().UnixNano()})
	var ps []pendingRoot
	if len(t.pending) >= t.sweepAt {
		ps = append(ps, t.pending...)
	}
	t.mu.Unlock()
	if ps != nil {
		t.sweepRoots(ps)
	}
}

// sweepRoots drops the pending roots now registered (they stay until
// forgotten) and those that lost. Forgotten takes the node's lock, so it
// is asked outside the table's.
func (t *rawTable) sweepRoots(ps []pendingRoot) {
	old := time.Now().UnixNano() - int64(loserAge)
	done := map[*treeNode]bool{}
	var lost []pendingRoot
	for _, p := range ps {
		//lint:ignore SA1019 registered is what it tells, and no hook does
		switch forgotten := p.n.Forgotten(); {
		case !forgotten:
			done[p.n] = true
		case p.made <= old:
			done[p.n] = true
			lost = append(lost, p)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range lost {
		if t.roots[p.id] == p.n {
			delete(t.roots, p.id)
			delete(t.listings, p.id)
		}
	}
	keep := t.pending[:0]
	for _, p := range t.pending {
		if !done[p.n] {
			keep = append(keep, p)
		}
	}
	clear(t.pending[len(keep):])
	t.pending = keep
	t.sweepAt = 2*len(keep) + 64
}

// rootForgotten drops root n; it tells whether n's tree may be closed
// (no entry of it is held).
func (t *rawTable) rootForgotten(n *treeNode) bool {
	id := inodeID(&n.Inode)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.roots[id] == n {
		delete(t.roots, id)
		delete(t.listings, id)
	}
	n.tree.rootGone = true
	return n.tree.rawLive == 0
}

// count returns the entries below archive roots the kernel holds.
func (t *rawTable) count() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live
}
