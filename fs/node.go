package fs

import (
	"context"
	"errors"
	iofs "io/fs"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/fs/layout"
	"github.com/cairnfs/cairn/store"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// vnode is a node of the mount's own (objtable.go): a directory or file
// of the layout, an archive's root, .stats, a node of .jobs. Every one
// answers GETATTR; what else it does is the optional interfaces below,
// which raw.go asks for. A node refuses every change (EROFS) unless it
// says otherwise.
type vnode interface {
	// getattr fills out; a zero timeout is the mount's.
	getattr(c *call, out *fuse.AttrOut) syscall.Errno
}

// call is one request to node id of the mount served by w.
type call struct {
	ctx context.Context // the request's: fc, for a request of the kernel
	w   *rawFS
	id  uint64
	fc  fuse.Context
}

// dirNode is a directory of the mount's own nodes.
type dirNode interface {
	vnode
	// lookup finds name, counts the lookup of its node (rawFS.lookupObj)
	// and fills out; plus: for READDIRPLUS, which may leave an entry
	// without a node (an errno) rather than pay for its attributes.
	lookup(c *call, name string, out *fuse.EntryOut, plus bool) syscall.Errno
	// opendir returns a listing and its FOPEN flags.
	opendir(c *call) (*listHandle, uint32, syscall.Errno)
}

// fileNode is a regular file of the mount's own nodes.
type fileNode interface {
	vnode
	// open returns a handle and its FOPEN flags.
	open(c *call, flags uint32) (fileHandle, uint32, syscall.Errno)
	// read serves a READ without a handle (no-open mode).
	read(c *call, dest []byte, off int64) (fuse.ReadResult, syscall.Errno)
}

// linkNode is a symlink; seekNode answers SEEK_DATA and SEEK_HOLE;
// setattrNode accepts some SETATTR; forgetNode hears that the kernel
// forgot it.
type (
	linkNode interface {
		readlink(c *call) ([]byte, syscall.Errno)
	}
	seekNode interface {
		lseek(c *call, off uint64, whence uint32) (uint64, syscall.Errno)
	}
	setattrNode interface {
		setattr(c *call, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno
	}
	forgetNode interface{ forgotten(f *mountFS) }
)

// fileHandle is an open file: OPEN's answer.
type fileHandle interface {
	Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno)
}

// Optional interfaces of a fileHandle.
type (
	handleReleaser interface {
		Release(ctx context.Context) syscall.Errno
	}
	handleWriter interface {
		Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno)
	}
)

// node is what most of the mount's own nodes share: the filesystem and
// the attributes they were made with.
type node struct {
	fsys *mountFS
	attr fuse.Attr
}

// getattr returns the attributes the node was made with.
func (n *node) getattr(c *call, out *fuse.AttrOut) syscall.Errno {
	out.Attr = n.attr
	return 0
}

// inoOf derives a stable inode number from a path in the store (or a
// path plus an archive-internal id): layout.Ino.
func inoOf(parts ...string) uint64 { return layout.Ino(parts...) }

// makeAttr fills the attributes every entry has.
func (f *mountFS) makeAttr(mode uint32, ino, size uint64, mtime time.Time) fuse.Attr {
	a := fuse.Attr{Ino: ino, Mode: mode, Size: size, Nlink: 1, Owner: f.owner}
	if mode&syscall.S_IFMT == syscall.S_IFDIR {
		a.Nlink = 2
	}
	sec, nsec := uint64(mtime.Unix()), uint32(mtime.Nanosecond())
	a.Mtime, a.Mtimensec = sec, nsec
	a.Ctime, a.Ctimensec = sec, nsec
	a.Atime, a.Atimensec = sec, nsec
	a.Blksize = 1 << 20
	a.Blocks = (size + 511) / 512
	return a
}

// errno maps an error of the store to what FUSE returns: a cancelled
// request gives EINTR, something that does not exist ENOENT, everything
// else (corrupt or missing chunks included) EIO.
func errno(err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return syscall.EINTR
	case errors.Is(err, store.ErrKeyMissing):
		return syscall.EACCES // an encrypted snapshot whose key the mount was not given
	case store.IsChunkError(err):
		return syscall.EIO
	case errors.Is(err, store.ErrNotFound), errors.Is(err, iofs.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, ErrBadPosition):
		return syscall.EINVAL // a seekdir to no entry's offset
	}
	return syscall.EIO
}

// openFlagsOK rejects opening for writing.
func openFlagsOK(flags uint32) syscall.Errno {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		return syscall.EROFS
	}
	return 0
}
