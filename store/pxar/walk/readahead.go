package walk

import (
	"cmp"
	"sync"
	"time"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// ReadAhead tunes the helper that runs ahead of a walk (readahead_tree.go).
// The zero value is the default: on, with the limits below.
type ReadAhead struct {
	// Off walks without a helper: every file is opened and read only
	// when the walk reaches it.
	Off bool
	// Entries bounds how many entries the helper is ahead of the walk;
	// default 1024.
	Entries int
	// Bytes bounds the file content it has asked the kernel to read
	// and the walk has not reached yet; default 32 MiB. A larger file
	// counts (and is read ahead) up to a quarter of it.
	Bytes int64
	// Workers is the number of goroutines that open and stat entries
	// ahead (they wait on the disk, not on a CPU); default 16.
	Workers int
	// StatAhead runs the helper in a walk with a Reuse hook too, where
	// it lists and stats ahead but reads no content (but see
	// ChangedSince). Off by default: measured on Go's tree with 1% of
	// the files changed and the caches dropped, the second backup was not
	// bound by its lstats, and the helper's own listing and stats cost
	// more CPU than they saved.
	StatAhead bool
	// ChangedSince, with StatAhead, has the helper read ahead the content
	// of regular files whose ctime is not before it as well: they are
	// likely to be read.
	ChangedSince time.Time
}

func (r ReadAhead) withDefaults() ReadAhead {
	r.Entries = cmp.Or(max(r.Entries, 0), 1024)
	r.Bytes = cmp.Or(max(r.Bytes, 0), 32<<20)
	r.Workers = cmp.Or(max(r.Workers, 0), 16)
	return r
}

// raItem is one entry the helper went ahead to, not yet reached by the
// walk.
type raItem struct {
	path   string
	bytes  int64   // content charged to the window
	passed bool    // the walk reached it: it left the window
	open   *raOpen // a regular file the helper opened for the walk; nil none
}

// raOpen is a regular file the helper opened, stat'ed and read the
// metadata of, held for the walk: when the walk reaches its path it
// takes the descriptor over instead of opening the file again.
type raOpen struct {
	fd   int // -1 once the walk took it over or it was closed
	st   unix.Stat_t
	meta pxar.Metadata
	data []byte // its content, read ahead (preread); nil: the walk reads it
}

// close closes o's descriptor unless the walk took it over, and gives
// back its content's buffer. Nil does nothing.
func (o *raOpen) close() {
	if o == nil {
		return
	}
	if o.fd >= 0 {
		unix.Close(o.fd)
		o.fd = -1
	}
	releasePreread(o.data)
	o.data = nil
}

// maxOpen bounds the descriptors the window holds for the walk (besides
// the entry bound): one per regular file ahead, each an open file. It is
// also kept to a quarter of the process's limit on open files.
const maxOpen = 1024

func openLimit() int {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil || rl.Cur == unix.RLIM_INFINITY {
		return maxOpen
	}
	return int(min(max(rl.Cur/4, 1), maxOpen))
}

// raWindow is what the helper holds ahead of the walk, bounded by entry
// count and content bytes. The walk never waits on it: it only says how
// far it got (pass), which makes room. The helper waits for room.
type raWindow struct {
	mu       sync.Mutex
	cond     sync.Cond
	q        []*raItem // in walk order
	bytes    int64
	maxBytes int64
	maxCount int
	open     int // entries of q holding a descriptor (raItem.open)
	maxOpen  int
	closed   bool
	last     string // the path the walk passed last
}

func newWindow(lim ReadAhead) *raWindow {
	w := &raWindow{maxBytes: lim.Bytes, maxCount: lim.Entries, maxOpen: min(lim.Entries, openLimit())}
	w.cond.L = &w.mu
	return w
}

// push adds an entry, waiting while the window holds its count; false
// once the window is closed. An entry the walk has gone past already
// (the helper fell behind) is not added but marked passed, so nothing is
// read or held for it; a directory's entries may still be ahead.
func (w *raWindow) push(it *raItem) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.q) >= w.maxCount && !w.closed {
		w.cond.Wait()
	}
	if w.closed {
		return false
	}
	if w.last != "" && walkCmp(it.path, w.last) <= 0 {
		it.passed = true
		return true
	}
	w.q = append(w.q, it)
	return true
}

// charge counts n content bytes for it, waiting until they fit (an item
// alone in an empty window always fits). false: the walk reached it
// meanwhile, or the window closed; nothing was charged.
func (w *raWindow) charge(it *raItem, n int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.bytes > 0 && w.bytes+n > w.maxBytes && !it.passed && !w.closed {
		w.cond.Wait()
	}
	if it.passed || w.closed {
		return false
	}
	w.bytes += n
	it.bytes = n
	return true
}

// stale tells whether the walk reached it already.
func (w *raWindow) stale(it *raItem) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return it.passed || w.closed
}

// offer holds o for the walk at it, waiting while the window holds
// maxOpen descriptors. false: the walk reached it already or the window
// closed; the caller keeps (and closes) o.
func (w *raWindow) offer(it *raItem, o *raOpen) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.open >= w.maxOpen && !it.passed && !w.closed {
		w.cond.Wait()
	}
	if it.passed || w.closed {
		return false
	}
	it.open = o
	w.open++
	return true
}

// pass tells that the walk reached path: every entry at or before it in
// walk order leaves the window. It returns the file held for path, if
// any (the walk owns it now); files held for entries before path, which
// the walk did not take, are closed.
func (w *raWindow) pass(path string) *raOpen {
	w.mu.Lock()
	w.last = path
	var got *raOpen
	var skipped []*raOpen
	k := 0
	for ; k < len(w.q) && walkCmp(w.q[k].path, path) <= 0; k++ {
		it := w.q[k]
		it.passed = true
		w.bytes -= it.bytes
		if it.open != nil {
			w.open--
			if it.path == path {
				got = it.open
			} else {
				skipped = append(skipped, it.open)
			}
			it.open = nil
		}
	}
	if k > 0 {
		clear(w.q[:k])
		w.q = w.q[k:]
		w.cond.Broadcast()
	}
	w.mu.Unlock()
	for _, o := range skipped {
		o.close()
	}
	return got
}

// close ends the window: the helper's waits end, nothing more is
// offered, and the files it holds are closed.
func (w *raWindow) close() {
	w.mu.Lock()
	w.closed = true
	var held []*raOpen
	for _, it := range w.q {
		if it.open != nil {
			held = append(held, it.open)
			it.open = nil
			w.open--
		}
	}
	w.cond.Broadcast()
	w.mu.Unlock()
	for _, o := range held {
		o.close()
	}
}

// walkCmp orders relative paths as the walk visits them: component by
// component, each directory before its entries ("a" < "a/b" < "a.c"),
// which is byte order with the separator below every other byte.
func walkCmp(a, b string) int {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		switch {
		case x == y:
			continue
		case x == '/':
			return -1
		case y == '/':
			return 1
		}
		return cmp.Compare(x, y)
	}
	return cmp.Compare(len(a), len(b))
}
