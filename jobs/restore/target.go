package restore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OpenTarget opens an image restore target: "-" is stdout; a block or
// character device (or a symbolic link to one) is written in place; a
// regular file is written under a temporary name in its directory
// (created O_EXCL, never through a symbolic link) and renamed into place
// by the returned close function only when the restore finished, else
// removed (sync: fsync the file and its directory): no partial file ever has the target's name. An existing target
// is refused without --overwrite; with it, a file or a symbolic link is
// replaced, never written through.
func OpenTarget(path string, stdout io.Writer, overwrite, sync bool) (Target, func(finished bool) error, error) {
	if path == "-" {
		return Target{Stream: stdout}, func(bool) error { return nil }, nil
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeDevice != 0 {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return Target{}, nil, err
		}
		return Target{File: f}, func(bool) error { return syncClose(f, sync) }, nil
	}
	fi, err := os.Lstat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0:
		return Target{}, nil, fmt.Errorf("restore target %s is neither a file nor a block device", path)
	case err == nil && !overwrite:
		return Target{}, nil, fmt.Errorf("restore target %s exists: give --overwrite to replace it", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return Target{}, nil, err
	}
	f, tmp, err := createTemp(path)
	if err != nil {
		return Target{}, nil, err
	}
	return Target{File: f}, func(finished bool) error {
		err := syncClose(f, sync && finished)
		if err == nil && finished {
			if err = os.Rename(tmp, path); err != nil {
				err = fmt.Errorf("restore to %s: %w", path, err)
			} else if sync {
				err = syncDir(filepath.Dir(path))
			}
		}
		if err != nil || !finished {
			os.Remove(tmp)
		}
		return err
	}, nil
}

// createTemp creates a new file beside path for its content, named as
// path (so that errors name the file the user gave).
func createTemp(path string) (*os.File, string, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		tmp := filepath.Join(dir, fmt.Sprintf(".%s.cairn-%08x", base, rand.Uint32()))
		fd, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err == nil {
			return os.NewFile(uintptr(fd), path), tmp, nil
		}
		if err != unix.EEXIST {
			return nil, "", fmt.Errorf("restore to %s: create a temporary file: %w", path, err)
		}
	}
	return nil, "", fmt.Errorf("restore to %s: no free temporary name", path)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err == nil {
		err = syncClose(d, true)
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// syncClose closes f, after an fsync if sync.
func syncClose(f *os.File, sync bool) error {
	var err error
	if sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// IsDevice reports whether path is (or links to) a device.
func IsDevice(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&os.ModeDevice != 0
}

// SyncTree waits until the restored tree has reached the disk: one
// syncfs(2) for the target's file system, rather than an fsync per file.
func SyncTree(target string) error {
	f, err := os.Open(target)
	if err == nil {
		err = unix.Syncfs(int(f.Fd()))
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("sync the restored tree at %s: %w", target, err)
	}
	return nil
}
