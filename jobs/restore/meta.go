package restore

import (
	"errors"
	"fmt"
	"os"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// setMeta restores an entry's owner, mode, xattrs, ACLs, capabilities
// and times, in the order the kernel requires: owner first (chown clears
// capabilities and set-id bits), then mode, xattrs, ACLs, capabilities,
// and the times last.
func (t *treeRestore) setMeta(path string, m *pxar.Metadata, symlink bool) error {
	var errs []error
	st := m.Stat
	if t.owners() {
		if err := unix.Lchown(path, int(st.UID), int(st.GID)); err != nil {
			errs = append(errs, fmt.Errorf("chown: %w", err))
		}
	}
	if !symlink {
		if err := unix.Chmod(path, uint32(st.Mode&0o7777)); err != nil {
			errs = append(errs, fmt.Errorf("chmod: %w", err))
		}
	}
	for _, x := range m.Xattrs {
		if err := unix.Lsetxattr(path, string(x.Name), x.Value, 0); err != nil && !unsupported(err) {
			errs = append(errs, fmt.Errorf("xattr %s: %w", x.Name, err))
		}
	}
	if !symlink {
		errs = append(errs, setACLs(path, m)...)
	}
	if m.FCaps != nil {
		if err := unix.Lsetxattr(path, "security.capability", m.FCaps, 0); err != nil && !unsupported(err) {
			errs = append(errs, fmt.Errorf("capabilities: %w", err))
		}
	}
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Sec: st.Mtime.Secs, Nsec: int64(st.Mtime.Nanos)}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		errs = append(errs, fmt.Errorf("mtime: %w", err))
	}
	return errors.Join(errs...)
}

func setACLs(path string, m *pxar.Metadata) []error {
	var errs []error
	if v, err := m.ACL.AccessXattr(m.Stat.Mode); err != nil {
		errs = append(errs, fmt.Errorf("acl: %w", err))
	} else if v != nil {
		if err := unix.Lsetxattr(path, "system.posix_acl_access", v, 0); err != nil && !unsupported(err) {
			errs = append(errs, fmt.Errorf("acl: %w", err))
		}
	}
	if v, err := m.ACL.DefaultXattr(); err != nil {
		errs = append(errs, fmt.Errorf("default acl: %w", err))
	} else if v != nil {
		if err := unix.Lsetxattr(path, "system.posix_acl_default", v, 0); err != nil && !unsupported(err) {
			errs = append(errs, fmt.Errorf("default acl: %w", err))
		}
	}
	return errs
}

// unsupported reports whether the target file system cannot hold xattrs.
func unsupported(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}

func (t *treeRestore) owners() bool {
	return t.opt.Owners || os.Geteuid() == 0
}
