package jobs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUnknownDevice is returned when the disks under a file system cannot
// be found in sysfs (network, ZFS, btrfs, overlay or tmpfs file systems).
var ErrUnknownDevice = errors.New("cannot tell which disks hold it")

// DefaultSysfs is where sysfs is mounted.
const DefaultSysfs = "/sys"

// maxStackDepth bounds the walk down device-mapper and md stacks.
const maxStackDepth = 8

// PathRotational tells whether the file system holding path sits on a
// rotational disk, reading sysfs at sysRoot. why says how it was
// decided, e.g. "dm-0 → [sda2 → sda rotational=1]".
func PathRotational(sysRoot, path string) (rot bool, why string, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false, "", fmt.Errorf("stat %s: %w", path, err)
	}
	dev := uint64(st.Dev)
	return DeviceRotational(sysRoot, unix.Major(dev), unix.Minor(dev))
}

// DeviceRotational tells whether block device major:minor is rotational:
// a partition is judged by its disk, a device-mapper or md device by the
// disks under it (rotational when any of them is).
func DeviceRotational(sysRoot string, major, minor uint32) (bool, string, error) {
	name, err := devName(sysRoot, major, minor)
	if err != nil {
		return false, "", err
	}
	return nameRotational(sysRoot, name, 0)
}

// devName finds the kernel name of device major:minor: the disk
// <sys>/block/NAME or the partition <sys>/block/DISK/NAME whose dev file
// holds "major:minor".
func devName(sysRoot string, major, minor uint32) (string, error) {
	want := fmt.Sprintf("%d:%d", major, minor)
	for _, pattern := range []string{"*/dev", "*/*/dev"} {
		matches, _ := filepath.Glob(filepath.Join(sysRoot, "block", pattern))
		for _, m := range matches {
			if data, err := os.ReadFile(m); err == nil && strings.TrimSpace(string(data)) == want {
				return filepath.Base(filepath.Dir(m)), nil
			}
		}
	}
	return "", fmt.Errorf("device %s: %w: not in %s/block (not a local block device)", want, ErrUnknownDevice, sysRoot)
}

func nameRotational(sysRoot, name string, depth int) (bool, string, error) {
	if depth > maxStackDepth {
		return false, "", fmt.Errorf("%s: %w: device stack deeper than %d", name, ErrUnknownDevice, maxStackDepth)
	}
	if name == "" || strings.ContainsAny(name, "/*?[\\") {
		return false, "", fmt.Errorf("device name %q: %w", name, ErrUnknownDevice)
	}
	disk := filepath.Join(sysRoot, "block", name)
	if _, err := os.Stat(disk); err != nil {
		return partitionRotational(sysRoot, name, depth)
	}
	if slaves, _ := readDirNames(filepath.Join(disk, "slaves")); len(slaves) > 0 {
		return stackRotational(sysRoot, name, slaves, depth)
	}
	raw, err := os.ReadFile(filepath.Join(disk, "queue", "rotational"))
	if err != nil {
		return false, "", fmt.Errorf("%s: %w: %w", name, ErrUnknownDevice, err)
	}
	v := strings.TrimSpace(string(raw))
	switch v {
	case "0", "1":
		return v == "1", name + " rotational=" + v, nil
	}
	return false, "", fmt.Errorf("%s: %w: queue/rotational says %q", name, ErrUnknownDevice, v)
}

// partitionRotational judges a partition by the disk that holds it:
// <sys>/block/<disk>/<name>/partition exists.
func partitionRotational(sysRoot, name string, depth int) (bool, string, error) {
	matches, _ := filepath.Glob(filepath.Join(sysRoot, "block", "*", name, "partition"))
	if len(matches) == 0 {
		return false, "", fmt.Errorf("%s: %w: neither a disk nor a partition in %s/block", name, ErrUnknownDevice, sysRoot)
	}
	parent := filepath.Base(filepath.Dir(filepath.Dir(matches[0])))
	rot, why, err := nameRotational(sysRoot, parent, depth+1)
	return rot, name + " → " + why, err
}

// stackRotational judges a device-mapper or md device by its slaves.
func stackRotational(sysRoot, name string, slaves []string, depth int) (bool, string, error) {
	slices.Sort(slaves)
	var whys []string
	anyRot := false
	var firstErr error
	for _, sl := range slaves {
		rot, why, err := nameRotational(sysRoot, sl, depth+1)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		anyRot = anyRot || rot
		whys = append(whys, why)
	}
	why := name + " → [" + strings.Join(whys, ", ") + "]"
	if anyRot {
		return true, why, nil
	}
	if firstErr != nil {
		return false, "", fmt.Errorf("%s: %w", name, firstErr)
	}
	return false, why, nil
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
