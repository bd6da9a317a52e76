package fs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Errors of mounting and unmounting, matched with errors.Is.
var (
	ErrNoFUSE        = errors.New("FUSE is not available")
	ErrBusy          = errors.New("mountpoint busy")
	ErrBadMountpoint = errors.New("bad mountpoint")
	ErrNotMounted    = errors.New("not a cairn mount")
	errBadOptions    = errors.New("bad mount options")
)

// fsType is the mount's type as /proc/mounts shows it.
const fsType = "fuse.cairn"

// checkMountpoint returns dir made absolute with symlinks resolved, after
// checking that it can take the mount: a directory outside the store, not
// a mount point already, and empty unless nonEmpty.
func checkMountpoint(dir, storeRoot string, nonEmpty bool) (string, error) {
	if _, err := os.Stat(fuseDevice); err != nil {
		return "", fmt.Errorf("%w: %s: %v (load the module: modprobe fuse; in a container pass --device /dev/fuse)", ErrNoFUSE, fuseDevice, err)
	}
	if err := checkFUSEAccess(); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrBadMountpoint, dir, err)
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, syscall.ENOTCONN) {
		return "", fmt.Errorf("%w: %s: a dead FUSE mount is left there (transport endpoint is not connected): run cairn umount %s", ErrBusy, abs, abs)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadMountpoint, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is not a directory", ErrBadMountpoint, abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadMountpoint, err)
	}
	sroot, err := filepath.EvalSymlinks(storeRoot)
	if err != nil {
		return "", fmt.Errorf("%w: store %s: %w", ErrBadMountpoint, storeRoot, err)
	}
	switch {
	case within(real, sroot):
		return "", fmt.Errorf("%w: %s is inside the store %s: the mount's own reads of the store would go through it", ErrBadMountpoint, real, sroot)
	case within(sroot, real):
		return "", fmt.Errorf("%w: the store %s is inside %s: the mount would hide it", ErrBadMountpoint, sroot, real)
	}
	if typ, ok := mountedAt(real); ok {
		if _, err := os.ReadDir(real); errors.Is(err, syscall.ENOTCONN) {
			return "", fmt.Errorf("%w: %s: a dead FUSE mount is left there (transport endpoint is not connected): run cairn umount %s", ErrBusy, real, real)
		}
		return "", fmt.Errorf("%w: %s is already a mount point (%s): unmount it first (cairn umount %s)", ErrBusy, real, typ, real)
	}
	if !nonEmpty {
		if err := checkEmpty(real); err != nil {
			return "", err
		}
	}
	if os.Geteuid() != 0 {
		if _, err := fusermount(); err != nil {
			return "", fmt.Errorf("%w: not root and fusermount3 is not installed: install fuse3 (or run as root)", ErrNoFUSE)
		}
	}
	return real, nil
}

// checkEmpty refuses a mountpoint that holds entries: the mount would
// hide them (fusermount refuses too, unless -o nonempty).
func checkEmpty(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadMountpoint, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %s: %w", ErrBadMountpoint, dir, err)
	}
	if len(names) > 0 {
		return fmt.Errorf("%w: %s is not empty (it holds %q): the mount would hide what is there; mount over it anyway with --nonempty", ErrBadMountpoint, dir, names[0])
	}
	return nil
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// mountError explains a failed mount.
func mountError(dir string, err error) error {
	switch {
	case errors.Is(err, syscall.ENODEV):
		return fmt.Errorf("%w: the kernel has no fuse filesystem (modprobe fuse): mount %s: %w", ErrNoFUSE, dir, err)
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return fmt.Errorf("mount %s: %w (run as root, or install fuse3 so fusermount3 can mount for you)", dir, err)
	case errors.Is(err, syscall.EBUSY):
		return fmt.Errorf("%w: mount %s: %w", ErrBusy, dir, err)
	}
	// go-fuse says "fusermount exited with code 256": a wait status
	var status int
	if _, serr := fmt.Sscanf(err.Error(), "fusermount exited with code %d", &status); serr == nil {
		return fmt.Errorf("mount %s: fusermount3 failed (exit status %d; it said why above)", dir, status>>8)
	}
	return fmt.Errorf("mount %s: %w", dir, err)
}

// mountedAt returns the type of the topmost mount at path, from
// /proc/self/mountinfo.
func mountedAt(path string) (string, bool) {
	var typ string
	found := false
	for mp, t := range mounts() {
		if mp == path {
			typ, found = t, true
		}
	}
	return typ, found
}

// cairnMounts returns the mountpoints of cairn mounts.
func cairnMounts() []string {
	var out []string
	for mp, t := range mounts() {
		if t == fsType {
			out = append(out, mp)
		}
	}
	return out
}

// mounts yields mountpoint and type of each line of /proc/self/mountinfo,
// in mount order.
func mounts() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		data, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			return
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			// id parent major:minor root mountpoint options [tags…] - type source superoptions
			pre, post, ok := strings.Cut(sc.Text(), " - ")
			f, t := strings.Fields(pre), strings.Fields(post)
			if !ok || len(f) < 5 || len(t) == 0 {
				continue
			}
			if !yield(unescapeMount(f[4]), t[0]) {
				return
			}
		}
	}
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Unmount unmounts the cairn mount at dir (`cairn umount`). The process
// serving it then exits cleanly. With lazy, a mount with open files is
// detached at once and goes away when they are closed; without it, such a
// mount gives ErrBusy. A dead mount (its process gone) is unmounted too.
func Unmount(dir string, lazy bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	typ, ok := mountedAt(abs)
	if !ok {
		return fmt.Errorf("%w: %s is not a mount point", ErrNotMounted, abs)
	}
	if typ != fsType {
		return fmt.Errorf("%w: %s is a %s mount", ErrNotMounted, abs, typ)
	}
	// The extra entries' own mounts (.jobs) sit on this one: first them.
	for _, sub := range mountsBelow(abs) {
		if err := unmountDir(sub, lazy, os.Geteuid() == 0); err != nil && !lazy {
			if errors.Is(err, syscall.EBUSY) {
				return fmt.Errorf("%w: %s: files are open under it (close them, or detach now with --lazy)", ErrBusy, sub)
			}
			return fmt.Errorf("unmount %s: %w", sub, err)
		}
	}
	err = unmountDir(abs, lazy, os.Geteuid() == 0)
	if errors.Is(err, syscall.EBUSY) {
		return fmt.Errorf("%w: %s: files are open under it (close them, or detach now with --lazy)", ErrBusy, abs)
	}
	if err != nil {
		return fmt.Errorf("unmount %s: %w", abs, err)
	}
	return nil
}

// unmountDir unmounts with umount2(2) as root, else with fusermount -u.
func unmountDir(dir string, lazy, direct bool) error {
	if direct {
		flags := 0
		if lazy {
			flags = unix.MNT_DETACH
		}
		return unix.Unmount(dir, flags)
	}
	bin, err := fusermount()
	if err != nil {
		return err
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	out, err := exec.Command(bin, append(args, dir)...).CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("busy")) {
			return fmt.Errorf("%s: %w", bytes.TrimSpace(out), syscall.EBUSY)
		}
		return fmt.Errorf("%s: %s: %w", bin, bytes.TrimSpace(out), err)
	}
	return nil
}

func fusermount() (string, error) {
	if p, err := exec.LookPath("fusermount3"); err == nil {
		return p, nil
	}
	return exec.LookPath("fusermount")
}

// kernelDev is a device number as the kernel spells it in sysfs names.
func kernelDev(dev uint64) uint64 { return uint64(unix.Major(dev))<<20 | uint64(unix.Minor(dev)) }

// setReadAhead sets the mount's read-ahead window: the kernel asks for up
// to this much ahead of a sequential reader (FUSE's default is 128 KiB).
func setReadAhead(dev uint64, kb int) error {
	path := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(dev), unix.Minor(dev))
	return os.WriteFile(path, []byte(strconv.Itoa(kb)), 0)
}

// abortConn ends a FUSE connection through fusectl: the kernel fails
// every request in flight and the serving loop returns. Where fusectl is
// not mounted (containers), it is mounted on a private directory for the
// moment it takes.
func abortConn(dev uint64) error {
	name := strconv.FormatUint(kernelDev(dev), 10)
	err := os.WriteFile(filepath.Join("/sys/fs/fuse/connections", name, "abort"), []byte("1"), 0)
	if err == nil {
		return nil
	}
	tmp, terr := os.MkdirTemp("", "cairn-fusectl-")
	if terr != nil {
		return fmt.Errorf("abort FUSE connection %s: %w", name, err)
	}
	defer os.Remove(tmp)
	if merr := unix.Mount("fusectl", tmp, "fusectl", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); merr != nil {
		return fmt.Errorf("abort FUSE connection %s: %w (mount fusectl: %v)", name, err, merr)
	}
	defer unix.Unmount(tmp, unix.MNT_DETACH)
	if err := os.WriteFile(filepath.Join(tmp, name, "abort"), []byte("1"), 0); err != nil {
		return fmt.Errorf("abort FUSE connection %s: %w", name, err)
	}
	return nil
}
