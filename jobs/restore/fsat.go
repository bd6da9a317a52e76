package restore

import (
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// System calls relative to directory descriptors. Every name passed here
// is one path component (checked with checkName), so nothing below the
// restore target is ever reached through a path the kernel walks.

// Whether the kernel has openat2(2), fchmodat2(2), setxattrat(2) and
// utimensat(2) with AT_EMPTY_PATH: 0 not known yet, 1 yes, 2 no.
var haveOpenat2, haveFchmodat2, haveSetxattrat, haveUtimensEmpty atomic.Int32

// checkName refuses a name that is not one path component: the decoder
// refuses them too, but the restore does not rely on that.
func checkName(name string) error {
	if !pxar.ValidName(name) {
		return fmt.Errorf("%w: %q", pxar.ErrInvalidName, name)
	}
	return nil
}

// retry repeats a system call interrupted by a signal.
func retry(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// openDirAt opens the directory name in dirfd without following a
// symbolic link: openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where
// the kernel has it, else openat with O_NOFOLLOW.
func openDirAt(dirfd int, name string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	var fd int
	if haveOpenat2.Load() != 2 {
		how := &unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
		err := retry(func() (err error) { fd, err = unix.Openat2(dirfd, name, how); return err })
		// ENOSYS, or EPERM from a seccomp filter that does not know it:
		// openat with O_NOFOLLOW of one component is as safe.
		if err != unix.ENOSYS && err != unix.EPERM {
			haveOpenat2.Store(1)
			return fd, err
		}
		haveOpenat2.Store(2)
	}
	err := retry(func() (err error) { fd, err = unix.Openat(dirfd, name, flags, 0); return err })
	return fd, err
}

// openParent opens ".." of dirfd (never a symbolic link) and checks that
// it is still the directory want: a directory moved during the restore is
// an error, not a way out of the target.
func openParent(dirfd int, want *dirNode) (int, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = unix.Openat(dirfd, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return -1, err
	}
	if err := want.check(fd); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// createAt creates the regular file name in dirfd for writing, with the
// permission bits it will have (the umask permitting), so that most files
// need no chmod afterwards. O_EXCL: an existing name, a symbolic link
// included, is an error. A bare descriptor, not an *os.File: that would
// cost five more system calls per file (poller registration and flag
// changes) for nothing.
func createAt(dirfd int, name string, mode uint64) (int, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode&0o777))
		return err
	})
	if err != nil {
		return -1, fmt.Errorf("create: %w", err)
	}
	return fd, nil
}

// removeAt removes what name is in dirfd, for --overwrite: a file, a
// symbolic link (never followed) or an empty directory. A missing name is
// not an error.
func removeAt(dirfd int, name string) error {
	err := unix.Unlinkat(dirfd, name, 0)
	if err == unix.EISDIR {
		err = unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
	}
	if err != nil && err != unix.ENOENT {
		return fmt.Errorf("remove the existing entry: %w", err)
	}
	return nil
}

// openHandle opens name in dirfd as an O_PATH handle without following a
// symbolic link, and checks that it is of type ifmt with one link: the
// node the restore just made, not something put in its place.
func openHandle(dirfd int, name string, ifmt uint32) (int, *unix.Stat_t, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return -1, nil, fmt.Errorf("open: %w", err)
	}
	st := new(unix.Stat_t)
	if err := unix.Fstat(fd, st); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("stat: %w", err)
	}
	if st.Mode&unix.S_IFMT != ifmt || st.Nlink != 1 {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("replaced while being restored (mode %o, %d links)", st.Mode, st.Nlink)
	}
	return fd, st, nil
}

func procPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

var empty = [1]byte{}

// fchmodHandle changes the mode of what the O_PATH handle fd refers to:
// fchmodat2(fd, "", AT_EMPTY_PATH), else chmod of /proc/self/fd/N (which
// resolves to the handle's own inode). Not for symbolic links.
func fchmodHandle(fd int, mode uint32) error {
	if haveFchmodat2.Load() != 2 {
		_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), uintptr(mode), unix.AT_EMPTY_PATH, 0, 0)
		if e != unix.ENOSYS && e != unix.EINVAL {
			haveFchmodat2.Store(1)
			return errnoErr(e)
		}
		haveFchmodat2.Store(2)
	}
	return unix.Chmod(procPath(fd), mode)
}

// xattrArgs is the kernel's struct xattr_args.
type xattrArgs struct {
	value uint64
	size  uint32
	flags uint32
}

// setxattrHandle sets an xattr on what the O_PATH handle fd refers to:
// setxattrat(fd, "", AT_EMPTY_PATH), else setxattr of /proc/self/fd/N.
// Without setxattrat a symbolic link's xattrs cannot be set without a
// path: ENOTSUP, as on a file system without xattrs.
func setxattrHandle(fd int, name string, v []byte, symlink bool) error {
	if haveSetxattrat.Load() != 2 {
		bname, err := unix.BytePtrFromString(name)
		if err != nil {
			return err
		}
		args := xattrArgs{size: uint32(len(v))}
		if len(v) > 0 {
			args.value = uint64(uintptr(unsafe.Pointer(&v[0])))
		}
		_, _, e := unix.Syscall6(unix.SYS_SETXATTRAT, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), unix.AT_EMPTY_PATH,
			uintptr(unsafe.Pointer(bname)), uintptr(unsafe.Pointer(&args)), unsafe.Sizeof(args))
		runtime.KeepAlive(v)
		if e != unix.ENOSYS {
			haveSetxattrat.Store(1)
			return errnoErr(e)
		}
		haveSetxattrat.Store(2)
	}
	if symlink {
		return unix.ENOTSUP
	}
	return unix.Setxattr(procPath(fd), name, v, 0)
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}
