package fs

import (
	"math/bits"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The node table. Every node the kernel holds of a mount, but its root,
// is a slot of the mount's table: the entries of file archives below
// their roots, and the mount's own nodes above them (the layout's
// directories and files, the archives' roots, .stats, .jobs). A slot is
// 72 bytes in fixed pages (no Go pointer in it, nothing for the garbage
// collector to follow) plus about 8 bytes of index, and its memory goes
// back when the kernel forgets the node. An entry of a file archive keeps
// only its TreeRef there (a go-fuse node cost about 525 bytes); a node of
// the mount's own also has its Go value (a vnode) in the table's objs.
//
// A node id is generation<<32 | slot, with the generation below 1<<31:
// never FUSE's root id (1), never go-fuse's poll hack id (^0). The
// generation is new for every slot made, so an id the kernel forgot
// never names the next node of its slot.

const (
	rawPageSlots = 1024
	rawMaxSlots  = 1 << 31    // slot bit 31 stays clear: no id is ^0
	noTree       = ^uint32(0) // the tree index of the mount's own nodes (objs)
)

// rawSlot is a node the kernel holds: an entry of a file archive, or
// (tree noTree) a node of the mount's own.
type rawSlot struct {
	ref     TreeRef // the entry's TreeEntry.Ref: all else is decoded again
	id      uint64  // TreeEntry.ID: hard links share it (and one slot); a node of the mount's own: its inode number
	nlookup uint64  // the kernel's lookup count
	parent  uint64  // node id of the directory it was first looked up in
	gen     uint32  // 0: free
	tree    uint32  // index in rawTable.trees; noTree: a node of the mount's own
	mode    uint32  // st_mode
	flags   uint32
}

const slotPrefilled = 1 // its content went to the page cache (prefill.go)

type rawPage struct {
	slots [rawPageSlots]rawSlot
	used  [rawPageSlots / 64]uint64
	live  int
}

// rawNode is what a request needs of a node: for an entry of a file
// archive its tree and its entry (its Ref, or the tree's root); for a
// node of the mount's own its vnode (an archive's root has both).
type rawNode struct {
	nodeID uint64
	tree   *openTree
	ref    TreeRef
	mode   uint32
	parent uint64
	root   bool
	obj    vnode
	ino    uint64 // a node of the mount's own: its inode number (0: the root's, as it says)
}

// rawTable holds the nodes the kernel holds of one mount: the looked-up
// entries of all its file archives and its own nodes (objs).
type rawTable struct {
	mu      sync.RWMutex // read-locked by the lookups of a request's node
	pages   []*rawPage
	inAvail []bool   // page index is in avail
	avail   []uint32 // pages that may have free slots
	empty   []uint32 // page indexes whose page was dropped
	gen     uint32
	live    int64
	high    int64    // most live entries since the table last shrunk
	index   []uint32 // open addressing (tree, id) -> slot+1
	trees   []*openTree
	freeT   []uint32

	root      vnode                  // the node of FUSE_ROOT_ID, never forgotten
	objs      map[uint32]vnode       // the mount's own nodes by slot (objtable.go)
	objHigh   int                    // most entries objs had since it was made
	rootTrees map[uint64]*openTree   // the open trees of archive roots by inode number (objtable.go)
	lazy      map[uint32]*lazyFile   // a file slot's reader in no-open mode (noopen.go)
	listings  map[uint64]*dirListing // a directory's last listing, by node id (prefill.go)
	lazyHigh  int                    // most entries lazy had since it was made
	listHigh  int                    // the same for listings
}

// shrunk returns m, or a copy of it once it holds less than an eighth of
// the most it held: a Go map keeps its memory when entries go.
func shrunk[K comparable, V any](m map[K]V, high *int) map[K]V {
	*high = max(*high, len(m)+1)
	if *high < 1024 || len(m) > *high/8 {
		return m
	}
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	*high = len(m)
	return c
}

// newRawTable returns the table of a mount whose root is root.
func newRawTable(root vnode) *rawTable {
	return &rawTable{root: root, objs: map[uint32]vnode{}, rootTrees: map[uint64]*openTree{}, lazy: map[uint32]*lazyFile{}, listings: map[uint64]*dirListing{}}
}

func (t *rawTable) slot(s uint32) *rawSlot { return &t.pages[s/rawPageSlots].slots[s%rawPageSlots] }

func rawID(gen, s uint32) uint64 { return uint64(gen)<<32 | uint64(s) }

// slotOf returns the live slot a node id names.
func (t *rawTable) slotOf(id uint64) (uint32, *rawSlot, bool) {
	s := uint32(id)
	p := s / rawPageSlots
	if id>>63 != 0 || int(p) >= len(t.pages) || t.pages[p] == nil {
		return 0, nil, false
	}
	sl := t.slot(s)
	if sl.gen == 0 || sl.gen != uint32(id>>32) {
		return 0, nil, false
	}
	return s, sl, true
}

// node returns the node of id.
func (t *rawTable) node(id uint64) (rawNode, bool) {
	if id == fuse.FUSE_ROOT_ID {
		return objNode(id, t.root, 0, 0, syscall.S_IFDIR), true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	s, sl, ok := t.slotOf(id)
	switch {
	case !ok:
		return rawNode{}, false
	case sl.tree == noTree:
		return objNode(id, t.objs[s], sl.parent, sl.id, sl.mode), true
	}
	return rawNode{nodeID: id, tree: t.trees[sl.tree], ref: sl.ref, mode: sl.mode, parent: sl.parent}, true
}

// lookup counts a lookup of e, an entry of o found in directory parent,
// and returns its node id: the slot of that entry (hard links share
// one) or a new one. ok is false when the table is full.
func (t *rawTable) lookup(o *openTree, e *TreeEntry, parent uint64) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ti := t.treeIndex(o)
	if s, ok := t.find(ti, e.ID, e.Mode); ok {
		sl := t.slot(s)
		sl.nlookup++
		return rawID(sl.gen, s), true
	}
	s, ok := t.alloc()
	if !ok {
		t.dropTreeIfUnused(o)
		return 0, false
	}
	*t.slot(s) = rawSlot{ref: e.Ref, id: e.ID, nlookup: 1, parent: parent, gen: t.nextGen(), tree: ti, mode: e.Mode}
	o.rawLive++
	t.live++
	t.insert(s)
	return rawID(t.gen, s), true
}

// nextGen returns a new generation, 1 to 1<<31-1.
func (t *rawTable) nextGen() uint32 {
	t.gen = (t.gen + 1) & 0x7fffffff
	if t.gen == 0 {
		t.gen = 1
	}
	return t.gen
}

// existing returns the node id and Ref of o's regular file id when the
// kernel holds it, marking it prefilled unless it was.
func (t *rawTable) prefillSlot(o *openTree, id uint64) (uint64, TreeRef, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o.rawIdx == 0 {
		return 0, TreeRef{}, false
	}
	s, ok := t.find(o.rawIdx-1, id, syscall.S_IFREG)
	if !ok {
		return 0, TreeRef{}, false
	}
	sl := t.slot(s)
	if sl.flags&slotPrefilled != 0 {
		return 0, TreeRef{}, false
	}
	sl.flags |= slotPrefilled
	return rawID(sl.gen, s), sl.ref, true
}

// unprefill lets a later prefill try node id again.
func (t *rawTable) unprefill(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, sl, ok := t.slotOf(id); ok {
		sl.flags &^= slotPrefilled
	}
}

// forgotten is what a FORGET leaves to do outside the table's lock.
type forgotten struct {
	lazy *lazyFile // a reader to release
	tree *openTree // a tree to close
	obj  vnode     // a node of the mount's own the kernel forgot
	// shrunk: the table went down to a hundredth of the most it held
	// (the kernel dropped its entries): time to hand memory back to the
	// system, as go-fuse does when its node table shrinks so
	shrunk bool
}

// forget applies a FORGET of id.
func (t *rawTable) forget(id, n uint64) (done forgotten) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, sl, ok := t.slotOf(id)
	if !ok {
		return done
	}
	sl.nlookup -= min(n, sl.nlookup)
	if sl.nlookup > 0 {
		return done
	}
	l := t.lazy[s]
	if l != nil {
		delete(t.lazy, s)
		t.lazy = shrunk(t.lazy, &t.lazyHigh)
	}
	if _, ok := t.listings[id]; ok {
		delete(t.listings, id)
		t.listings = shrunk(t.listings, &t.listHigh)
	}
	t.remove(s)
	ti := sl.tree
	*sl = rawSlot{}
	t.free(s)
	t.high = max(t.high, t.live)
	t.live--
	if t.high >= 1024 && t.live*100 <= t.high {
		t.high = t.live
		done.shrunk = true
	}
	done.lazy = l
	if ti == noTree {
		done.obj, done.tree = t.dropObj(s)
		return done
	}
	o := t.trees[ti]
	o.rawLive--
	if t.dropTreeIfUnused(o) && o.rootRefs == 0 {
		t.dropRootTree(o)
		done.tree = o
	}
	return done
}

// treeIndex returns o's index in trees, giving it one.
func (t *rawTable) treeIndex(o *openTree) uint32 {
	if o.rawIdx == 0 {
		var i uint32
		if n := len(t.freeT); n > 0 {
			i, t.freeT = t.freeT[n-1], t.freeT[:n-1]
			t.trees[i] = o
		} else {
			i = uint32(len(t.trees))
			t.trees = append(t.trees, o)
		}
		o.rawIdx = i + 1
	}
	return o.rawIdx - 1
}

// dropTreeIfUnused gives back o's index once no slot uses it.
func (t *rawTable) dropTreeIfUnused(o *openTree) bool {
	if o.rawLive > 0 || o.rawIdx == 0 {
		return o.rawLive == 0
	}
	i := o.rawIdx - 1
	t.trees[i] = nil
	t.freeT = append(t.freeT, i)
	o.rawIdx = 0
	return true
}

// alloc takes a free slot, making a page when none has one.
func (t *rawTable) alloc() (uint32, bool) {
	for len(t.avail) > 0 {
		p := t.avail[len(t.avail)-1]
		if pg := t.pages[p]; pg != nil && pg.live < rawPageSlots {
			for w, u := range pg.used {
				if u != ^uint64(0) {
					b := firstZero(u)
					pg.used[w] |= 1 << b
					pg.live++
					return p*rawPageSlots + uint32(w*64+b), true
				}
			}
		}
		t.avail = t.avail[:len(t.avail)-1]
		t.inAvail[p] = false
	}
	var p uint32
	if n := len(t.empty); n > 0 {
		p, t.empty = t.empty[n-1], t.empty[:n-1]
	} else {
		if (len(t.pages)+1)*rawPageSlots > rawMaxSlots {
			return 0, false
		}
		p = uint32(len(t.pages))
		t.pages = append(t.pages, nil)
		t.inAvail = append(t.inAvail, false)
	}
	pg := new(rawPage)
	pg.used[0], pg.live = 1, 1
	t.pages[p] = pg
	if !t.inAvail[p] {
		t.inAvail[p] = true
		t.avail = append(t.avail, p)
	}
	return p * rawPageSlots, true
}

func firstZero(u uint64) int { return bits.TrailingZeros64(^u) }

// free gives slot s back, dropping its page once the page is empty.
func (t *rawTable) free(s uint32) {
	p := s / rawPageSlots
	pg := t.pages[p]
	i := s % rawPageSlots
	pg.used[i/64] &^= 1 << (i % 64)
	pg.live--
	if pg.live == 0 {
		t.pages[p] = nil
		t.empty = append(t.empty, p)
		return
	}
	if !t.inAvail[p] {
		t.inAvail[p] = true
		t.avail = append(t.avail, p)
	}
}
