package fs

import (
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Statfs answers statfs(2) (df) on any node of the mount with the figures
// of the file system that holds the store's directory (for a store in a
// bucket, its local directory): size, free and available blocks in that
// file system's block size, and its inode counts. "Used" is thus what the
// whole file system uses, the store and whatever else it holds: the
// store's own size is not known without walking every chunk. The kernel
// sends STATFS with the node df names: every node answers it so.
func (f *mountFS) statfs(out *fuse.StatfsOut) syscall.Errno {
	var st unix.Statfs_t
	if err := unix.Statfs(f.s.Root(), &st); err != nil {
		f.log.Warn("statfs of the store failed", "store", f.s.Root(), "err", err)
		return errno(err)
	}
	fillStatfs(out, &st)
	return 0
}

// fillStatfs copies the store file system's figures. The name length is
// the mount's own limit (a pxar entry name), not the store's.
func fillStatfs(out *fuse.StatfsOut, st *unix.Statfs_t) {
	out.Blocks, out.Bfree, out.Bavail = st.Blocks, st.Bfree, st.Bavail
	out.Files, out.Ffree = st.Files, st.Ffree
	out.Bsize = uint32(st.Bsize)
	out.Frsize = uint32(st.Frsize)
	if out.Frsize == 0 {
		out.Frsize = out.Bsize
	}
	out.NameLen = 255
}
