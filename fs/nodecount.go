package fs

import (
	"sync"
	"sync/atomic"
	"time"
)

// Counting the tree nodes the kernel holds. go-fuse (2.12) registers the
// node a Lookup returns only after the Lookup, and when another request
// registered a node of the same entry first (parallel readers looking up
// the same names, or a lookup again once the entry's timeout ran out),
// it keeps that one and drops the new node, which is then never
// forgotten. So a new node is counted only once it is seen registered
// (Inode.Forgotten false); one still unregistered after loserAge lost.

const loserAge = time.Second

const (
	nodeNew       = iota // made, not yet seen registered
	nodeCounted          // registered and counted
	nodeForgotten        // the kernel forgot it (or it lost)
)

type pendingNode struct {
	n    *treeNode
	made int64 // Unix ns
}

// nodeCounter counts the registered tree nodes of a mount.
type nodeCounter struct {
	live    atomic.Int64
	mu      sync.Mutex
	pending []pendingNode
	sweepAt int // sweep when pending reaches this
}

// made notes a node just made for the kernel.
func (c *nodeCounter) made(n *treeNode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, pendingNode{n: n, made: time.Now().UnixNano()})
	if len(c.pending) >= c.sweepAt {
		c.sweepLocked()
	}
}

// forgotten notes that the kernel forgot n.
func (c *nodeCounter) forgotten(n *treeNode) {
	if !n.counted.CompareAndSwap(nodeNew, nodeForgotten) && n.counted.CompareAndSwap(nodeCounted, nodeForgotten) {
		c.live.Add(-1)
	}
}

// count returns the registered nodes, seen now.
func (c *nodeCounter) count() int64 {
	c.mu.Lock()
	c.sweepLocked()
	c.mu.Unlock()
	return c.live.Load()
}

// sweepLocked counts the pending nodes now registered and drops those
// that lost or were forgotten already.
func (c *nodeCounter) sweepLocked() {
	old := time.Now().UnixNano() - int64(loserAge)
	keep := c.pending[:0]
	for _, p := range c.pending {
		switch {
		//lint:ignore SA1019 registered is what it tells, and no hook does
		case !p.n.Forgotten():
			if p.n.counted.CompareAndSwap(nodeNew, nodeCounted) {
				c.live.Add(1)
			}
		case p.made > old && p.n.counted.Load() == nodeNew:
			keep = append(keep, p) // not registered yet
		}
	}
	clear(c.pending[len(keep):])
	c.pending = keep
	c.sweepAt = 2*len(keep) + 64
}
