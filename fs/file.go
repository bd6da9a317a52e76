package fs

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cairnfs/cairn/fs/layout"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// archiveFile is an archive of a snapshot shown as one regular file: an
// image (or other data kept in one index) read through the chunk cache,
// or a blob's decoded content.
type archiveFile struct {
	node
	arch *layout.Archive // its snapshot's manifest, read at the first open
	lazy lazyFile

	holeMu      sync.Mutex // one making of holeMap at a time
	holeMap     atomic.Pointer[holeMap]
	blocksKnown bool // attr.Blocks is the data's, known when the node was made (layout.Archive.Data)
}

var (
	_ fileNode   = (*archiveFile)(nil)
	_ seekNode   = (*archiveFile)(nil)
	_ forgetNode = (*archiveFile)(nil)
)

// open gives a handle of its own to each open; in no-open mode the node
// keeps one handle for all its readers (noopen.go).
func (n *archiveFile) open(c *call, flags uint32) (fileHandle, uint32, syscall.Errno) {
	return n.fsys.openMode(c.ctx, flags, n.openHandle, fuse.FOPEN_KEEP_CACHE)
}

func (n *archiveFile) read(c *call, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return n.lazy.read(c.ctx, n.fsys, dest, off, n.openHandle)
}

func (n *archiveFile) forgotten(*mountFS) { n.lazy.release(n.fsys) }

// openHandle makes a handle: a reader of the index (checked against the
// manifest) through the shared cache, or the blob read, checked and
// decoded (blobs are small: at most 128 MiB, usually a few KiB).
func (n *archiveFile) openHandle(ctx context.Context) (fileHandle, syscall.Errno) {
	m, a, err := n.arch.Man.Archive(n.arch.Name)
	if err != nil {
		return nil, n.openFailed(err)
	}
	if n.arch.Blob {
		data, err := n.fsys.s.ReadBlob(n.arch.Snapshot(), m, a.Files[0])
		if err != nil {
			return nil, n.openFailed(err)
		}
		return &bytesHandle{fsys: n.fsys, data: data}, 0
	}
	x, err := n.fsys.s.OpenSnapshotIndex(n.arch.Snapshot(), m, a.Files[0])
	if err != nil {
		return nil, n.openFailed(err)
	}
	r := chunkcache.NewReader(n.fsys.bg, x, n.fsys.cache, n.fsys.readahead)
	r.LimitScans()
	return &readHandle{fsys: n.fsys, snap: n.arch.Snapshot(), archive: n.arch.Name, r: r, size: r.Size(), closer: x}, 0
}

// openFailed counts and logs a damaged archive and maps err to an errno.
func (n *archiveFile) openFailed(err error) syscall.Errno {
	e := errno(err)
	if e == syscall.EIO {
		n.fsys.readErrors.Add(1)
		n.fsys.log.Error("open failed", "snapshot", n.arch.Snapshot().String(), "archive", n.arch.Name, "err", err)
	}
	return e
}

// contextReaderAt is what a readHandle reads from: a chunkcache.Reader,
// or a file of an ArchiveTree.
type contextReaderAt interface {
	ReadAtContext(ctx context.Context, p []byte, off int64) (int, error)
}

// slicer is a reader that can return a range inside one chunk without a
// copy, held until released (chunkcache.Reader).
type slicer interface {
	Slice(ctx context.Context, off int64, n int) (chunkcache.Held, bool, error)
}

var _ slicer = (*chunkcache.Reader)(nil)

// readHandle is one open file whose data comes through the chunk cache.
// Reads run concurrently; nothing is locked around them.
type readHandle struct {
	fsys    *mountFS
	snap    store.Snapshot
	archive string
	path    string        // inside a file archive ("" for an image)
	where   func() string // the path, worked out when logged (raw.go)
	r       contextReaderAt
	size    int64
	closer  io.Closer
	logged  sync.Map // digests whose failure was logged
}

var (
	_ fileHandle     = (*readHandle)(nil)
	_ handleReleaser = (*readHandle)(nil)
)

// Read fills dest from the file. A failed chunk fails the whole request
// (never a short read, which the kernel would take for the end of file).
func (h *readHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= h.size {
		return fuse.ReadResultData(nil), 0
	}
	if rest := h.size - off; int64(len(dest)) > rest {
		dest = dest[:rest]
	}
	if s, ok := h.r.(slicer); ok {
		// Within one chunk: hand the kernel the cached chunk itself.
		held, ok, err := s.Slice(ctx, off, len(dest))
		if err != nil {
			return nil, h.fail(err, off)
		}
		if ok {
			h.fsys.served.Add(int64(len(held.Data)))
			return &heldResult{h: held}, 0
		}
	}
	n, err := h.r.ReadAtContext(ctx, dest, off)
	if err != nil && !(errors.Is(err, io.EOF) && n == len(dest)) {
		return nil, h.fail(err, off)
	}
	h.fsys.served.Add(int64(n))
	return fuse.ReadResultData(dest[:n]), 0
}

// fail logs a failed read once per chunk and handle, naming snapshot,
// archive, offset and digest, and maps it to an errno.
func (h *readHandle) fail(err error, off int64) syscall.Errno {
	e := errno(err)
	if e == syscall.EINTR {
		return e
	}
	h.fsys.readErrors.Add(1)
	args := []any{"snapshot", h.snap.String(), "archive", h.archive}
	if h.path != "" {
		args = append(args, "path", h.path)
	} else if h.where != nil {
		args = append(args, "path", h.where())
	}
	var cre *chunkcache.ReadError
	if errors.As(err, &cre) {
		if _, dup := h.logged.LoadOrStore(cre.Digest, true); dup {
			return e
		}
		args = append(args, "offset", cre.Offset, "digest", cre.Digest, "err", cre.Err)
	} else {
		args = append(args, "offset", off, "err", err)
	}
	h.fsys.log.Error("read failed", args...)
	return e
}

// Release closes what the handle read from, and gives back the chunks
// its reader kept.
func (h *readHandle) Release(ctx context.Context) syscall.Errno {
	if c, ok := h.r.(interface{ Close() }); ok {
		c.Close()
	}
	h.closer.Close()
	return 0
}

// heldResult is a READ reply of a cached chunk's memory, held from
// recycling until go-fuse has written it to the kernel. It offers
// Slices: go-fuse (v2.12.1, fusefd_linux.go) then writes the slices
// with writev and calls Done after the write. A result without Slices
// would have its Bytes taken and Done called before the write when
// splice is off (protocol-server.go), as it is here; so Bytes, for any
// other path, copies.
type heldResult struct {
	h    chunkcache.Held
	done atomic.Bool
}

var _ fuse.ReadResult = (*heldResult)(nil)

func (r *heldResult) Size() int { return len(r.h.Data) }

func (r *heldResult) Bytes(buf []byte) ([]byte, fuse.Status) {
	return append(buf[:0], r.h.Data...), fuse.OK
}

func (r *heldResult) Slices() ([][]byte, fuse.Status) { return [][]byte{r.h.Data}, fuse.OK }

// Done releases the chunk, once.
func (r *heldResult) Done() {
	if r.done.CompareAndSwap(false, true) {
		r.h.Release()
	}
}

// bytesHandle serves reads from memory.
type bytesHandle struct {
	fsys *mountFS
	data []byte
}

var _ fileHandle = (*bytesHandle)(nil)

func (h *bytesHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(h.data)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(h.data)))
	if h.fsys != nil {
		h.fsys.served.Add(end - off)
	}
	return fuse.ReadResultData(h.data[off:end]), 0
}
