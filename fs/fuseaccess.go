package fs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// fuseDevice is the FUSE device a mount opens (fusermount3 for a user).
const fuseDevice = "/dev/fuse"

// fuseConf is where fusermount3 reads user_allow_other.
const fuseConf = "/etc/fuse.conf"

// checkFUSEAccess refuses, with what the admin changes, a user who cannot
// open the FUSE device: fusermount3 would say only "failed to open
// /dev/fuse: Permission denied" and exit with a wait status. Opening the
// device makes a FUSE connection that closing it drops: nothing is
// mounted.
func checkFUSEAccess() error {
	if os.Geteuid() == 0 {
		return nil
	}
	fd, err := unix.Open(fuseDevice, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	if !errors.Is(err, syscall.EACCES) && !errors.Is(err, syscall.EPERM) {
		return nil // fusermount3 says what else is wrong
	}
	return fmt.Errorf("%w: this user cannot open %s (%s, %s): %s", ErrNoFUSE, fuseDevice, err, deviceOwner(), fuseAdvice())
}

// deviceOwner describes the device's mode and owners.
func deviceOwner() string {
	var st unix.Stat_t
	if unix.Stat(fuseDevice, &st) != nil {
		return "mode unknown"
	}
	group := fmt.Sprint(st.Gid)
	if g, err := user.LookupGroupId(group); err == nil {
		group = g.Name
	}
	owner := fmt.Sprint(st.Uid)
	if u, err := user.LookupId(owner); err == nil {
		owner = u.Username
	}
	return fmt.Sprintf("mode %04o, owner %s, group %s", st.Mode&0o7777, owner, group)
}

// fuseAdvice is what an admin does so that users can mount.
func fuseAdvice() string {
	return "an admin lets users mount with `chmod 0666 " + fuseDevice + "` (Debian's default, kept by udev), " +
		"or gives it a group the user is in (`chgrp fuse " + fuseDevice + " && chmod 0660 " + fuseDevice +
		"`, then `adduser USER fuse`; some systems have a fuse group already); as root, cairn mounts without it"
}

// checkAllowOther refuses --allow-other for a user when fuse.conf does
// not allow it (fusermount3 would refuse after the mount began).
func checkAllowOther() error {
	if os.Geteuid() == 0 {
		return nil
	}
	f, err := os.Open(fuseConf)
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "user_allow_other" {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: --allow-other needs the line user_allow_other in %s, which only an admin can add (or mount as root)", errBadOptions, fuseConf)
}
