package fs

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Prefill. Reading the small files of a tree costs one READ round trip
// each, more than the content itself. When a file of a directory is read,
// the next small files of that directory in listing order (the order tar,
// cp -r and rsync read them in, and the order of their contents in the
// archive) are read here, ahead, and stored in the kernel's page cache
// (FUSE_NOTIFY_STORE): their reads then need no request at all. A find or
// ls reads no file and so prefills nothing.

const (
	prefillFiles   = 64        // files ahead of the one being read
	prefillBytes   = 4 << 20   // and at most this many bytes
	prefillMaxFile = 256 << 10 // larger files come with the kernel's read-ahead
	prefillMaxList = 1 << 14   // entries of a directory prefilled at most
	prefillQueue   = 16        // directories waiting for a worker
	prefillWorkers = 2
	prefillActive  = time.Second // how long after a file read a listing prefills
)

// dirListing is a directory's last complete listing, in listing order.
type dirListing struct {
	names []string // sorted: found by binary search
	sizes []uint64 // regular files' sizes; ^0 for other entries

	mu   sync.Mutex
	next int // entries before next are prefilled or queued
}

// listingBuilder collects a listing as the kernel reads it.
type listingBuilder struct {
	names []string
	sizes []uint64
	over  bool
}

func (b *listingBuilder) add(e TreeEntry) {
	if b.over || len(b.names) >= prefillMaxList {
		b.over = true
		return
	}
	size := ^uint64(0)
	if e.Mode&syscall.S_IFMT == syscall.S_IFREG {
		size = e.Size
	}
	b.names = append(b.names, e.Name)
	b.sizes = append(b.sizes, size)
}

// done returns the listing, or nil when it cannot be used.
func (b *listingBuilder) done() *dirListing {
	if b.over || len(b.names) < 2 || !slices.IsSorted(b.names) {
		return nil
	}
	return &dirListing{names: b.names, sizes: b.sizes}
}

// prefillTask is a run of a directory's entries to prefill.
type prefillTask struct {
	dir      *treeNode
	l        *dirListing
	from, to int
}

// prefiller runs the prefill workers of a mount.
type prefiller struct {
	tasks    chan prefillTask
	wg       sync.WaitGroup
	filled   atomic.Int64 // files stored in the page cache
	lastRead atomic.Int64 // when a file was last read (Unix ns)
}

func startPrefiller(ctx context.Context) *prefiller {
	p := &prefiller{tasks: make(chan prefillTask, prefillQueue)}
	for range prefillWorkers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case t := <-p.tasks:
					p.run(ctx, t)
				}
			}
		}()
	}
	return p
}

// after queues the files that follow n in its directory's listing.
func (p *prefiller) after(n *treeNode) {
	p.lastRead.Store(time.Now().UnixNano())
	name, parent := n.Parent()
	if parent == nil {
		return
	}
	dir, ok := parent.Operations().(*treeNode)
	if !ok {
		return
	}
	l := dir.listing.Load()
	if l == nil {
		return
	}
	if i, found := slices.BinarySearch(l.names, name); found {
		p.queue(dir, l, i+1)
	}
}

// listed queues the first files of a directory listed while files
// are being read (tar, cp -r: the first file would otherwise cost a READ);
// a find or ls, which reads no file, prefills nothing.
func (p *prefiller) listed(dir *treeNode, l *dirListing) {
	if time.Now().UnixNano()-p.lastRead.Load() < int64(prefillActive) {
		p.queue(dir, l, 0)
	}
}

// queue hands a worker the files from start on, unless enough of them
// are queued already.
func (p *prefiller) queue(dir *treeNode, l *dirListing, start int) {
	l.mu.Lock()
	from := max(start, l.next)
	if from > start+prefillFiles/2 {
		l.mu.Unlock()
		return
	}
	to, bytes := from, uint64(0)
	for to < len(l.names) && to < start+prefillFiles && bytes < prefillBytes {
		if s := l.sizes[to]; s <= prefillMaxFile {
			bytes += s
		}
		to++
	}
	l.next = to
	l.mu.Unlock()
	if from < to {
		select {
		case p.tasks <- prefillTask{dir: dir, l: l, from: from, to: to}:
		default: // busy: the kernel reads these itself
		}
	}
}

// run reads the task's small files and stores them in the page cache.
func (p *prefiller) run(ctx context.Context, t prefillTask) {
	for j := t.from; j < t.to && ctx.Err() == nil; j++ {
		size := t.l.sizes[j]
		if size == 0 || size > prefillMaxFile {
			continue
		}
		ch := t.dir.GetChild(t.l.names[j])
		if ch == nil {
			continue // the kernel does not know it (yet, or any more)
		}
		n, ok := ch.Operations().(*treeNode)
		if !ok || n.prefilled.Swap(true) {
			continue
		}
		if data, ok := n.readAll(ctx, int(size)); ok && ch.WriteCache(0, data) == 0 {
			p.filled.Add(1)
		} else {
			n.prefilled.Store(false) // a later prefill may try again
		}
	}
}

// readAll reads a small file's whole content.
func (n *treeNode) readAll(ctx context.Context, size int) ([]byte, bool) {
	fh, e := n.open(ctx)
	if e != 0 {
		return nil, false
	}
	h := fh.(*readHandle)
	defer h.Release(ctx)
	buf := make([]byte, size)
	m, _ := h.r.ReadAtContext(ctx, buf, 0) // io.EOF with the whole file is fine
	return buf, m == size
}
