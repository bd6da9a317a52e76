package fs

import (
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Cached listings. What a snapshot holds never changes: its list of
// archives (a snapshot directory) and every directory of its file
// archives. Such directories are opened with FOPEN_CACHE_DIR and
// FOPEN_KEEP_CACHE, so the kernel keeps the listing in the directory's
// page cache and serves a second getdents without READDIR(PLUS). The
// namespace, group and snapshot lists change and are opened without
// them, so a new snapshot appears.
//
// The read-only store mount goes further: no OPENDIR at all, and every
// listing cached (noopendir.go).

// listHandle is an open directory of the mount's own nodes: the entries
// of its listing, made at the first request (and again at a request
// for the start once some were sent: a rewinddir), so that a listing
// read in several requests is one consistent list. Offsets count
// entries: the entry at index i is sent with offset i+1.
type listHandle struct {
	id   uint64 // the directory's node id
	node dirNode
	list func(c *call) ([]fuse.DirEntry, syscall.Errno)
	// inval drops the kernel's cached listing of a listing that changes
	// (no-opendir mode caches every listing); nil for the others
	inval func()

	mu   sync.Mutex
	es   []fuse.DirEntry
	made bool // es is a listing
	sent bool // entries of es were sent
}

// readdirs counts the listings made for the kernel (tests: a cached
// listing makes none).
var readdirs atomic.Int64

// cachedFlags are the FOPEN flags of a listing the kernel keeps.
const cachedFlags = fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE

// listOf answers OPENDIR of a directory whose listing is list.
func listOf(n dirNode, list func(c *call) ([]fuse.DirEntry, syscall.Errno)) *listHandle {
	return &listHandle{node: n, list: list}
}

// serve answers a READDIR(PLUS) at offset off: the entries from there
// on, as many as fit; with plus each entry's node looked up (an entry
// whose lookup fails goes without a node).
func (h *listHandle) serve(c *call, off uint64, out *fuse.DirEntryList, plus bool) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.made || off == 0 && h.sent {
		readdirs.Add(1)
		es, e := h.list(c)
		if e != 0 {
			return e
		}
		h.es, h.made, h.sent = es, true, false
	}
	if off >= uint64(len(h.es)) {
		if h.inval != nil {
			// The reply that ends the listing (empty) is being made: the
			// kernel stored the entries before it and marks its cache
			// complete when the reply arrives. Dropping the pages now
			// makes that cache useless, so the next listing asks again.
			h.inval()
		}
		return 0
	}
	for i := off; i < uint64(len(h.es)); i++ {
		de := h.es[i]
		de.Off = i + 1
		if !plus {
			if !out.AddDirEntry(de) {
				break
			}
			h.sent = true
			continue
		}
		eo := out.AddDirLookupEntry(de)
		if eo == nil {
			break
		}
		h.sent = true
		if h.node.lookup(c, de.Name, eo, true) != 0 {
			*eo = fuse.EntryOut{} // no node: the kernel links no entry for it
		}
	}
	return 0
}

// opendir: a snapshot directory (ttl 0) is cached by the kernel; a
// listing that changes is not.
func (d *dir) opendir(c *call) (*listHandle, uint32, syscall.Errno) {
	h := listOf(d, d.list)
	if d.TTL() == 0 {
		return h, cachedFlags, 0
	}
	if d.fsys.noOpen { // no-opendir mode (noopendir.go)
		w, id := c.w, c.id
		h.inval = func() { w.notifyContent(id) }
	}
	return h, 0, 0
}
