package restore

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// metaOps change one entry's metadata through a descriptor: an open
// file or directory (fchown, fchmod, fsetxattr, futimens) or an O_PATH
// handle (handleOps). Never through a path.
type metaOps struct {
	// have is the entry's current stat where known: owner and mode
	// changes that would change nothing are skipped (on a journaled
	// file system each one is a metadata update).
	have     *unix.Stat_t
	chown    func(uid, gid int) error
	chmod    func(mode uint32) error
	setxattr func(name string, v []byte) error
	utimes   func(ts []unix.Timespec) error
}

// handleOps change the metadata of what an O_PATH handle refers to (a
// symbolic link, device, FIFO or socket the restore made): fchownat and
// utimensat with AT_EMPTY_PATH, fchmodat2 and setxattrat (or their
// /proc/self/fd forms, which resolve to the handle's own inode).
func handleOps(fd int, st *unix.Stat_t, symlink bool, dirfd int, name string) metaOps {
	return metaOps{
		have:     st,
		chown:    func(uid, gid int) error { return unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH) },
		chmod:    func(mode uint32) error { return fchmodHandle(fd, mode) },
		setxattr: func(name string, v []byte) error { return setxattrHandle(fd, name, v, symlink) },
		utimes: func(ts []unix.Timespec) error {
			err := unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
			if err != unix.EINVAL || haveUtimensEmpty.Load() == 1 {
				haveUtimensEmpty.Store(1)
				return err
			}
			// Before Linux 5.8 utimensat has no AT_EMPTY_PATH.
			if symlink {
				return unix.UtimesNanoAt(dirfd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
			}
			return unix.UtimesNanoAt(unix.AT_FDCWD, procPath(fd), ts, 0)
		},
	}
}

func fdOps(fd int) metaOps {
	var have *unix.Stat_t
	if st := new(unix.Stat_t); unix.Fstat(fd, st) == nil {
		have = st
	}
	return metaOps{
		have:     have,
		chown:    func(uid, gid int) error { return unix.Fchown(fd, uid, gid) },
		chmod:    func(mode uint32) error { return unix.Fchmod(fd, mode) },
		setxattr: func(name string, v []byte) error { return unix.Fsetxattr(fd, name, v, 0) },
		utimes: func(ts []unix.Timespec) error {
			// futimens: utimensat with a NULL path
			_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
			if e != 0 {
				return e
			}
			return nil
		},
	}
}

// applyMeta restores an entry's owner, mode, xattrs, ACLs, capabilities
// and times, in the order the kernel requires: owner first (chown clears
// capabilities and set-id bits), then mode, xattrs, ACLs, capabilities,
// and the times last.
func (t *treeRestore) applyMeta(o metaOps, m *pxar.Metadata, symlink bool) error {
	var errs []error
	st := m.Stat
	mode := uint32(st.Mode & 0o7777)
	chowned := false
	if t.opt.Owners && (o.have == nil || o.have.Uid != uint32(st.UID) || o.have.Gid != uint32(st.GID)) {
		chowned = true // which may clear set-id bits
		if err := o.chown(int(st.UID), int(st.GID)); err != nil {
			errs = append(errs, fmt.Errorf("chown: %w", err))
		}
	}
	if !symlink && (o.have == nil || chowned || o.have.Mode&0o7777 != mode) {
		if err := o.chmod(mode); err != nil {
			errs = append(errs, fmt.Errorf("chmod: %w", err))
		}
	}
	for _, x := range m.Xattrs {
		if err := o.setxattr(string(x.Name), x.Value); err != nil && !unsupported(err) {
			errs = append(errs, fmt.Errorf("xattr %s: %w", x.Name, err))
		}
	}
	if !symlink {
		errs = append(errs, setACLs(o, m)...)
	}
	if m.FCaps != nil {
		if err := o.setxattr("security.capability", m.FCaps); err != nil && !unsupported(err) {
			errs = append(errs, fmt.Errorf("capabilities: %w", err))
		}
	}
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Sec: st.Mtime.Secs, Nsec: int64(st.Mtime.Nanos)}}
	if err := o.utimes(ts); err != nil {
		errs = append(errs, fmt.Errorf("mtime: %w", err))
	}
	return errors.Join(errs...)
}

func setACLs(o metaOps, m *pxar.Metadata) []error {
	var errs []error
	if v, err := m.ACL.AccessXattr(m.Stat.Mode); err != nil {
		errs = append(errs, fmt.Errorf("acl: %w", err))
	} else if v != nil {
		if err := o.setxattr("system.posix_acl_access", v); err != nil && !unsupported(err) {
			errs = append(errs, fmt.Errorf("acl: %w", err))
		}
	}
	if v, err := m.ACL.DefaultXattr(); err != nil {
		errs = append(errs, fmt.Errorf("default acl: %w", err))
	} else if v != nil {
		if err := o.setxattr("system.posix_acl_default", v); err != nil && !unsupported(err) {
			errs = append(errs, fmt.Errorf("default acl: %w", err))
		}
	}
	return errs
}

// unsupported reports whether the target file system cannot hold xattrs.
func unsupported(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}
