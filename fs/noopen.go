package fs

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// No-open mode. A read-only mount answers OPEN with ENOSYS: the kernel
// then stops sending OPEN and RELEASE for the whole connection (FUSE's
// no_open, Linux 4.19+) and every READ arrives without a file handle.
// Two requests fewer per file is what makes tar and cp -r of a tree fast:
// a FUSE request costs tens of microseconds, a small file's content
// fewer. Each file node then keeps one reader, made at its first read and
// closed when the kernel forgets the node or at unmount, and the page
// cache is kept across opens (FOPEN_KEEP_CACHE is no_open's default).

// lazyFile is a node's reader in no-open mode. Reads share it without
// waiting for each other; only closing it waits for the reads in flight.
type lazyFile struct {
	mu   sync.RWMutex // held shared by reads, exclusively to close
	made sync.Mutex   // one open at a time
	h    atomic.Pointer[handleRef]
}

type handleRef struct{ h fileHandle }

// opener makes a node's handle: what OPEN gets when it is sent.
type opener func(ctx context.Context) (fileHandle, syscall.Errno)

// read serves a READ without a handle (the kernel sent no OPEN) through
// the node's own handle, made by open on first use.
func (l *lazyFile) read(ctx context.Context, f *mountFS, dest []byte, off int64, open opener) (fuse.ReadResult, syscall.Errno) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	ref, e := l.get(ctx, f, open)
	if e != 0 {
		return nil, e
	}
	return ref.h.Read(ctx, dest, off)
}

// get returns the handle, making it once.
func (l *lazyFile) get(ctx context.Context, f *mountFS, open opener) (*handleRef, syscall.Errno) {
	if ref := l.h.Load(); ref != nil {
		return ref, 0
	}
	l.made.Lock()
	defer l.made.Unlock()
	if ref := l.h.Load(); ref != nil {
		return ref, 0
	}
	h, e := open(ctx)
	if e != 0 {
		return nil, e
	}
	ref := &handleRef{h: h}
	l.h.Store(ref)
	f.lazyFiles.Store(l, true)
	return ref, 0
}

// release closes the handle once no read uses it; the next read makes a
// new one.
func (l *lazyFile) release(f *mountFS) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ref := l.h.Swap(nil); ref != nil {
		f.lazyFiles.Delete(l)
		if r, ok := ref.h.(handleReleaser); ok {
			r.Release(context.Background())
		}
	}
}

// closeLazyFiles releases the handles still made at unmount.
func (f *mountFS) closeLazyFiles() {
	f.lazyFiles.Range(func(k, _ any) bool {
		k.(*lazyFile).release(f)
		return true
	})
}

// openMode is what a file node's open answers: ENOSYS in no-open mode
// (the kernel then never asks again), else a handle from open with
// fuseFlags (FOPEN_KEEP_CACHE for a snapshot's files, which never change).
func (f *mountFS) openMode(ctx context.Context, flags uint32, open opener, fuseFlags uint32) (fileHandle, uint32, syscall.Errno) {
	if e := openFlagsOK(flags); e != 0 {
		return nil, 0, e
	}
	if f.noOpen {
		return nil, 0, syscall.ENOSYS
	}
	h, e := open(ctx)
	return h, fuseFlags, e
}
