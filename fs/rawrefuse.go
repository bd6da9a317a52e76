package fs

import (
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// What would change a file archive is refused (EROFS) when a raw node is
// one of the request's nodes, before go-fuse, which would panic on the
// unknown id; an archive's root is a go-fuse node that refuses them
// itself (readOnly). Locks, fsync and ioctl get go-fuse's answers for a
// node without them.

const erofs = fuse.Status(syscall.EROFS)

func anyRaw(ids ...uint64) bool {
	for _, id := range ids {
		if isRawID(id) {
			return true
		}
	}
	return false
}

func (w *rawFS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	if anyRaw(in.NodeId) {
		return erofs
	}
	return w.RawFileSystem.SetAttr(cancel, in, out)
}

func (w *rawFS) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	if anyRaw(in.NodeId) {
		return erofs
	}
	return w.RawFileSystem.Mknod(cancel, in, name, out)
}

func (w *rawFS) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	if anyRaw(in.NodeId) {
		return erofs
	}
	return w.RawFileSystem.Mkdir(cancel, in, name, out)
}

func (w *rawFS) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	if anyRaw(h.NodeId) {
		return erofs
	}
	return w.RawFileSystem.Unlink(cancel, h, name)
}

func (w *rawFS) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	if anyRaw(h.NodeId) {
		return erofs
	}
	return w.RawFileSystem.Rmdir(cancel, h, name)
}

func (w *rawFS) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	if anyRaw(in.NodeId, in.Newdir) {
		return erofs
	}
	return w.RawFileSystem.Rename(cancel, in, oldName, newName)
}

func (w *rawFS) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	if anyRaw(in.NodeId, in.Oldnodeid) {
		return erofs
	}
	return w.RawFileSystem.Link(cancel, in, name, out)
}

func (w *rawFS) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	if anyRaw(h.NodeId) {
		return erofs
	}
	return w.RawFileSystem.Symlink(cancel, h, target, name, out)
}

func (w *rawFS) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	if anyRaw(in.NodeId) {
		return erofs
	}
	return w.RawFileSystem.SetXAttr(cancel, in, attr, data)
}

func (w *rawFS) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	if anyRaw(h.NodeId) {
		return erofs
	}
	return w.RawFileSystem.RemoveXAttr(cancel, h, attr)
}

func (w *rawFS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if anyRaw(in.NodeId) {
		return erofs
	}
	return w.RawFileSystem.Create(cancel, in, name, out)
}

func (w *rawFS) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	if anyRaw(in.NodeId) {
		return erofs
	}
	return w.RawFileSystem.Tmpfile(cancel, in, out)
}

func (w *rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	if anyRaw(in.NodeId) {
		return 0, erofs
	}
	return w.RawFileSystem.Write(cancel, in, data)
}

func (w *rawFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	if anyRaw(in.NodeId) {
		return 0, erofs
	}
	return w.RawFileSystem.Writev(cancel, in, data)
}

func (w *rawFS) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	if anyRaw(in.NodeId) {
		return erofs
	}
	return w.RawFileSystem.Fallocate(cancel, in)
}

func (w *rawFS) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	if anyRaw(in.NodeId, in.NodeIdOut) {
		return 0, erofs
	}
	return w.RawFileSystem.CopyFileRange(cancel, in)
}

func (w *rawFS) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if anyRaw(in.NodeId) {
		return fuse.ENOTSUP
	}
	return w.RawFileSystem.Fsync(cancel, in)
}

func (w *rawFS) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	if anyRaw(in.NodeId) {
		return fuse.Status(syscall.ENOTTY)
	}
	return w.RawFileSystem.Ioctl(cancel, in, inbuf, out, outbuf)
}

func (w *rawFS) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	if anyRaw(in.NodeId) {
		return fuse.ENOTSUP
	}
	return w.RawFileSystem.GetLk(cancel, in, out)
}

func (w *rawFS) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	if anyRaw(in.NodeId) {
		return fuse.ENOTSUP
	}
	return w.RawFileSystem.SetLk(cancel, in)
}

func (w *rawFS) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	if anyRaw(in.NodeId) {
		return fuse.ENOTSUP
	}
	return w.RawFileSystem.SetLkw(cancel, in)
}
