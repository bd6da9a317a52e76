package fs

import (
	"context"
	"errors"
	iofs "io/fs"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/fs/layout"
	"github.com/cairnfs/cairn/store"
	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is what every node of the mount shares: the filesystem and the
// attributes it was created with.
type node struct {
	gofs.Inode
	fsys *mountFS
	attr fuse.Attr
}

var _ gofs.NodeGetattrer = (*node)(nil)

// Getattr returns the attributes the node was created with.
func (n *node) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
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

// readOnly answers every call that would change a directory with EROFS.
// The kernel mount is read-write only so that .jobs/*/control can take
// commands; every other node refuses changes here, and go-fuse's defaults
// (some of which report success) are never reached.
type readOnly struct{}

var (
	_ gofs.NodeMkdirer    = readOnly{}
	_ gofs.NodeMknoder    = readOnly{}
	_ gofs.NodeLinker     = readOnly{}
	_ gofs.NodeSymlinker  = readOnly{}
	_ gofs.NodeCreater    = readOnly{}
	_ gofs.NodeUnlinker   = readOnly{}
	_ gofs.NodeRmdirer    = readOnly{}
	_ gofs.NodeRenamer    = readOnly{}
	_ gofs.NodeSetattrer  = readOnly{}
	_ gofs.NodeSetxattrer = readOnly{}
)

func (readOnly) Mkdir(context.Context, string, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Mknod(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Link(context.Context, gofs.InodeEmbedder, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Symlink(context.Context, string, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Create(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}

func (readOnly) Unlink(context.Context, string) syscall.Errno { return syscall.EROFS }
func (readOnly) Rmdir(context.Context, string) syscall.Errno  { return syscall.EROFS }

func (readOnly) Rename(context.Context, string, gofs.InodeEmbedder, string, uint32) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Setattr(context.Context, gofs.FileHandle, *fuse.SetAttrIn, *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Setxattr(context.Context, string, []byte, uint32) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Removexattr(context.Context, string) syscall.Errno { return syscall.EROFS }

// openFlagsOK rejects opening for writing.
func openFlagsOK(flags uint32) syscall.Errno {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		return syscall.EROFS
	}
	return 0
}

var _ gofs.NodeFlusher = readOnly{}

// Flush answers ENOSYS: nothing is ever buffered for writing here, and
// the kernel stops sending FLUSH on every close once it hears ENOSYS,
// which saves a round trip per file for tar, cp and rsync.
func (readOnly) Flush(context.Context, gofs.FileHandle) syscall.Errno { return syscall.ENOSYS }
