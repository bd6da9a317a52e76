package walk

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// chattr flags (linux/fs.h) and the PBS feature flags that record them
// in Stat.Flags (pbs-client/src/pxar/flags.rs).
var chattrFlags = [...]struct{ fs, pbs uint64 }{
	{0x0000_0020, 0x0001_0000}, // FS_APPEND_FL → WITH_FLAG_APPEND
	{0x0000_0080, 0x0002_0000}, // FS_NOATIME_FL → WITH_FLAG_NOATIME
	{0x0000_0004, 0x0004_0000}, // FS_COMPR_FL → WITH_FLAG_COMPR
	{0x0080_0000, 0x0008_0000}, // FS_NOCOW_FL → WITH_FLAG_NOCOW
	{0x0000_0040, 0x0010_0000}, // FS_NODUMP_FL → WITH_FLAG_NODUMP
	{0x0001_0000, 0x0020_0000}, // FS_DIRSYNC_FL → WITH_FLAG_DIRSYNC
	{0x0000_0010, 0x0040_0000}, // FS_IMMUTABLE_FL → WITH_FLAG_IMMUTABLE
	{0x0000_0008, 0x0080_0000}, // FS_SYNC_FL → WITH_FLAG_SYNC
	{0x0000_0400, 0x0100_0000}, // FS_NOCOMP_FL → WITH_FLAG_NOCOMP
	{0x2000_0000, 0x0200_0000}, // FS_PROJINHERIT_FL → WITH_FLAG_PROJINHERIT
}

// xattrSource reads the extended attributes of one file through an open
// descriptor (fd ≥ 0) or a path that is not followed if it is a symlink.
type xattrSource struct {
	fd   int
	path string
}

func (s xattrSource) list(buf []byte) (int, error) {
	if s.fd >= 0 {
		return unix.Flistxattr(s.fd, buf)
	}
	return unix.Llistxattr(s.path, buf)
}

func (s xattrSource) get(name string, buf []byte) (int, error) {
	if s.fd >= 0 {
		return unix.Fgetxattr(s.fd, name, buf)
	}
	return unix.Lgetxattr(s.path, name, buf)
}

// sized calls f with a buffer big enough for its result, retrying when
// the value grew in between.
func sized(f func([]byte) (int, error)) ([]byte, error) {
	for range 8 {
		n, err := f(nil)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return []byte{}, nil
		}
		buf := make([]byte, n)
		n, err = f(buf)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
	return nil, unix.ERANGE
}

func unsupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EBADF) ||
		errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)
}

// keepXattr tells the extended attributes PBS stores as XATTR items.
func keepXattr(name string) bool {
	return len(name) <= 255 && (strings.HasPrefix(name, "user.") || strings.HasPrefix(name, "trusted.") ||
		name == "security.NTACL")
}

// readMetadata gathers an entry's metadata: stat fields, chattr flags
// (fd ≥ 0), xattrs, POSIX ACLs and file capabilities.
func readMetadata(st *unix.Stat_t, src xattrSource, fd int) (pxar.Metadata, error) {
	m := pxar.Metadata{Stat: pxar.Stat{
		Mode:  uint64(st.Mode),
		UID:   st.Uid,
		GID:   st.Gid,
		Mtime: pxar.Timestamp{Secs: st.Mtim.Sec, Nanos: uint32(st.Mtim.Nsec)},
	}}
	if fd >= 0 {
		attr, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
		switch {
		case err == nil:
			for _, f := range chattrFlags {
				if uint64(attr)&f.fs != 0 {
					m.Stat.Flags |= f.pbs
				}
			}
		case !unsupported(err):
			return m, fmt.Errorf("reading file attributes: %w", err)
		}
	}
	list, err := sized(src.list)
	if err != nil {
		if unsupported(err) {
			return m, nil
		}
		return m, fmt.Errorf("listing xattrs: %w", err)
	}
	for _, name := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		if err := addXattr(&m, src, name); err != nil {
			return m, err
		}
	}
	slices.SortFunc(m.Xattrs, func(a, b pxar.Xattr) int { return bytes.Compare(a.Name, b.Name) })
	return m, nil
}

func addXattr(m *pxar.Metadata, src xattrSource, name string) error {
	st := m.Stat
	switch {
	case name == pxar.XattrFCaps:
	case name == pxar.XattrACLAccess && !st.IsSymlink():
	case name == pxar.XattrACLDefault && st.IsDir():
	case keepXattr(name):
	default:
		return nil
	}
	val, err := sized(func(b []byte) (int, error) { return src.get(name, b) })
	if errors.Is(err, unix.ENODATA) || unsupported(err) {
		return nil // removed meanwhile, or not readable this way
	}
	if err != nil {
		return fmt.Errorf("reading xattr %s: %w", name, err)
	}
	switch name {
	case pxar.XattrFCaps:
		m.FCaps = val
	case pxar.XattrACLAccess:
		err = m.ACL.SetAccessFromXattr(val)
	case pxar.XattrACLDefault:
		err = m.ACL.SetDefaultFromXattr(val)
	default:
		m.Xattrs = append(m.Xattrs, pxar.Xattr{Name: []byte(name), Value: val})
	}
	return err
}
