package fs

import (
	"os/user"
	"slices"
	"strconv"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Extended attributes and access(2). An entry of a file archive (its root
// included) has its archive's extended attributes, POSIX ACLs and file
// capabilities (ArchiveTree.Xattrs); a node of the mount's own has none.

// xattrs returns a raw node's extended attributes.
func (w *rawFS) xattrs(cancel <-chan struct{}, h *fuse.InHeader) ([]Xattr, fuse.Status) {
	r, t, e, ctx, st := w.decoded(cancel, h, "open archive")
	if st != fuse.OK {
		return nil, st
	}
	xs, err := t.Xattrs(ctx, e)
	if err != nil {
		return nil, fuse.Status(w.fail(r, "xattrs", err))
	}
	return xs, fuse.OK
}

// objOnly tells whether id is a node of the mount's own that is no
// archive's root (which has the extended attributes of its tree).
func (w *rawFS) objOnly(id uint64) bool {
	r, ok := w.t.node(id)
	return ok && r.obj != nil && !r.root
}

func (w *rawFS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	if w.objOnly(h.NodeId) {
		return 0, fuse.ENOATTR
	}
	xs, st := w.xattrs(cancel, h)
	if st != fuse.OK {
		return 0, st
	}
	n, e := getXattr(xs, attr, dest)
	return n, fuse.Status(e)
}

func (w *rawFS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	if w.objOnly(h.NodeId) {
		return 0, fuse.OK
	}
	xs, st := w.xattrs(cancel, h)
	if st != fuse.OK {
		return 0, st
	}
	n, e := listXattr(xs, dest)
	return n, fuse.Status(e)
}

func (w *rawFS) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	var out fuse.AttrOut
	if st := w.GetAttr(cancel, &fuse.GetAttrIn{InHeader: in.InHeader}, &out); st != fuse.OK {
		return st
	}
	if !hasAccess(in.Caller, out.Attr, in.Mask) {
		return fuse.EACCES
	}
	return fuse.OK
}

// hasAccess is access(2)'s check of mask (R_OK 4, W_OK 2, X_OK 1) for
// caller against a's owner and mode, as go-fuse makes it for its nodes.
// The mount has default_permissions, under which Linux checks itself and
// sends no ACCESS; this answers should one come.
func hasAccess(c fuse.Caller, a fuse.Attr, mask uint32) bool {
	mask &= 7
	if mask == 0 {
		return true
	}
	if c.Uid == 0 { // execute needs an execute bit, but on a directory
		return mask&1 == 0 || a.Mode&0o111 != 0 || a.Mode&syscall.S_IFMT == syscall.S_IFDIR
	}
	bits := a.Mode
	switch {
	case c.Uid == a.Uid:
		bits = a.Mode >> 6
	case c.Gid == a.Gid, (a.Mode>>3)&mask != a.Mode&mask && inGroup(c.Uid, a.Gid):
		bits = a.Mode >> 3
	}
	return bits&mask == mask
}

// inGroup tells whether uid's supplementary groups hold gid.
func inGroup(uid, gid uint32) bool {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return false
	}
	gs, err := u.GroupIds()
	return err == nil && slices.Contains(gs, strconv.FormatUint(uint64(gid), 10))
}

// getXattr returns one attribute of xs; ERANGE with the size when dest
// is short.
func getXattr(xs []Xattr, name string, dest []byte) (uint32, syscall.Errno) {
	for _, x := range xs {
		if x.Name == name {
			if len(dest) < len(x.Value) {
				return uint32(len(x.Value)), syscall.ERANGE
			}
			return uint32(copy(dest, x.Value)), 0
		}
	}
	return 0, syscall.ENODATA
}

// listXattr returns the names of xs, each ended by a NUL.
func listXattr(xs []Xattr, dest []byte) (uint32, syscall.Errno) {
	var b []byte
	for _, x := range xs {
		b = append(append(b, x.Name...), 0)
	}
	if len(dest) < len(b) {
		return uint32(len(b)), syscall.ERANGE
	}
	return uint32(copy(dest, b)), 0
}
