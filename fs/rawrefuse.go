package fs

import (
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// What would change the mount is refused (EROFS): it is read-only but
// for .jobs' control files, whose SETATTR (the truncation of `echo cmd >
// control`) and writes their nodes and handles take. Locks, fsync and
// ioctl get go-fuse's answers for a node without them.

const erofs = fuse.Status(syscall.EROFS)

func (w *rawFS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	if r, ok := w.t.node(in.NodeId); ok {
		if n, ok := r.obj.(setattrNode); ok {
			c := w.call(&in.InHeader, cancel)
			if e := n.setattr(c, in, out); e != 0 {
				return fuse.Status(e)
			}
			fixAttr(&out.Attr, r.ino, r.mode)
			return fuse.OK
		}
	}
	return erofs
}

func (w *rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	h, ok := w.handle(in.Fh, false).(handleWriter)
	if !ok {
		return 0, erofs
	}
	n, e := h.Write(reqCtx(&in.InHeader, cancel), data, int64(in.Offset))
	return n, fuse.Status(e)
}

func (w *rawFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	var b []byte
	for _, d := range data {
		b = append(b, d...)
	}
	return w.Write(cancel, in, b)
}

func (w *rawFS) Mknod(<-chan struct{}, *fuse.MknodIn, string, *fuse.EntryOut) fuse.Status {
	return erofs
}

func (w *rawFS) Mkdir(<-chan struct{}, *fuse.MkdirIn, string, *fuse.EntryOut) fuse.Status {
	return erofs
}

func (w *rawFS) Unlink(<-chan struct{}, *fuse.InHeader, string) fuse.Status { return erofs }

func (w *rawFS) Rmdir(<-chan struct{}, *fuse.InHeader, string) fuse.Status { return erofs }

func (w *rawFS) Rename(<-chan struct{}, *fuse.RenameIn, string, string) fuse.Status {
	return erofs
}

func (w *rawFS) Link(<-chan struct{}, *fuse.LinkIn, string, *fuse.EntryOut) fuse.Status {
	return erofs
}

func (w *rawFS) Symlink(<-chan struct{}, *fuse.InHeader, string, string, *fuse.EntryOut) fuse.Status {
	return erofs
}

func (w *rawFS) SetXAttr(<-chan struct{}, *fuse.SetXAttrIn, string, []byte) fuse.Status {
	return erofs
}

func (w *rawFS) RemoveXAttr(<-chan struct{}, *fuse.InHeader, string) fuse.Status { return erofs }

func (w *rawFS) Create(<-chan struct{}, *fuse.CreateIn, string, *fuse.CreateOut) fuse.Status {
	return erofs
}

func (w *rawFS) Tmpfile(<-chan struct{}, *fuse.CreateIn, *fuse.CreateOut) fuse.Status {
	return erofs
}

func (w *rawFS) Fallocate(<-chan struct{}, *fuse.FallocateIn) fuse.Status { return erofs }

func (w *rawFS) CopyFileRange(<-chan struct{}, *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	return 0, erofs
}

func (w *rawFS) Fsync(<-chan struct{}, *fuse.FsyncIn) fuse.Status { return fuse.ENOTSUP }

func (w *rawFS) Ioctl(<-chan struct{}, *fuse.IoctlIn, []byte, *fuse.IoctlOut, []byte) fuse.Status {
	return fuse.Status(syscall.ENOTTY)
}

func (w *rawFS) GetLk(<-chan struct{}, *fuse.LkIn, *fuse.LkOut) fuse.Status { return fuse.ENOTSUP }

func (w *rawFS) SetLk(<-chan struct{}, *fuse.LkIn) fuse.Status { return fuse.ENOTSUP }

func (w *rawFS) SetLkw(<-chan struct{}, *fuse.LkIn) fuse.Status { return fuse.ENOTSUP }
