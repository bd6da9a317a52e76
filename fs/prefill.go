package fs

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
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
	ids   []uint64 // TreeEntry.ID: the entry's slot, if the kernel holds it

	mu   sync.Mutex
	next int // entries before next are prefilled or queued
}

// listingBuilder collects a listing as the kernel reads it.
type listingBuilder struct {
	names []string
	sizes []uint64
	ids   []uint64
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
	b.ids = append(b.ids, e.ID)
}

// done returns the listing, or nil when it cannot be used.
func (b *listingBuilder) done() *dirListing {
	if b.over || len(b.names) < 2 || !slices.IsSorted(b.names) {
		return nil
	}
	return &dirListing{names: b.names, sizes: b.sizes, ids: b.ids}
}

// prefillTask is a run of a directory's entries to prefill.
type prefillTask struct {
	tree     *openTree
	l        *dirListing
	from, to int
}

// prefiller runs the prefill workers of a mount.
type prefiller struct {
	w        *rawFS
	tasks    chan prefillTask
	wg       sync.WaitGroup
	filled   atomic.Int64 // files stored in the page cache
	lastRead atomic.Int64 // when a file was last read (Unix ns)
}

func startPrefiller(ctx context.Context, w *rawFS) *prefiller {
	p := &prefiller{w: w, tasks: make(chan prefillTask, prefillQueue)}
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

// after queues the files that follow name in directory dir's listing
// (dir a node id of tree o).
func (p *prefiller) after(t *rawTable, o *openTree, dir uint64, name string) {
	p.lastRead.Store(time.Now().UnixNano())
	l := t.listing(dir)
	if l == nil {
		return
	}
	if i, found := slices.BinarySearch(l.names, name); found {
		p.queue(o, l, i+1)
	}
}

// listed queues the first files of a directory listed while files
// are being read (tar, cp -r: the first file would otherwise cost a READ);
// a find or ls, which reads no file, prefills nothing.
func (p *prefiller) listed(o *openTree, dir uint64, l *dirListing) {
	if time.Now().UnixNano()-p.lastRead.Load() < int64(prefillActive) {
		p.queue(o, l, 0)
	}
}

// queue hands a worker the files from start on, unless enough of them
// are queued already.
func (p *prefiller) queue(o *openTree, l *dirListing, start int) {
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
		case p.tasks <- prefillTask{tree: o, l: l, from: from, to: to}:
		default: // busy: the kernel reads these itself
		}
	}
}

// run reads the task's small files the kernel holds and stores them in
// the page cache.
func (p *prefiller) run(ctx context.Context, t prefillTask) {
	srv := p.w.srv.Load()
	for j := t.from; j < t.to && ctx.Err() == nil && srv != nil; j++ {
		size := t.l.sizes[j]
		if size == 0 || size > prefillMaxFile {
			continue
		}
		id, ref, ok := p.w.t.prefillSlot(t.tree, t.l.ids[j])
		if !ok {
			continue // the kernel does not know it (yet, or any more), or it is done
		}
		if data, ok := readAll(ctx, t.tree, ref, int(size)); ok && srv.InodeNotifyStoreCache(id, 0, data) == fuse.OK {
			p.filled.Add(1)
		} else {
			p.w.t.unprefill(id) // a later prefill may try again
		}
	}
}

// readAll reads a small file's whole content.
func readAll(ctx context.Context, o *openTree, ref TreeRef, size int) ([]byte, bool) {
	t, _, err := o.get(ctx)
	if err != nil {
		return nil, false
	}
	f, err := t.Open(ctx, TreeEntry{Ref: ref})
	if err != nil {
		return nil, false
	}
	defer f.Close()
	buf := make([]byte, size)
	m, _ := f.ReadAtContext(ctx, buf, 0) // io.EOF with the whole file is fine
	return buf, m == size
}
