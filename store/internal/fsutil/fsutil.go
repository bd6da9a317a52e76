package fsutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// WriteFileAtomic writes data to a temporary file beside path, syncs it
// and renames it into place.
func WriteFileAtomic(path string, data []byte) error {
	return WriteAtomic(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteAtomic creates a temporary file beside path, has fill write it,
// syncs it and renames it into place (mode 0644); on any error the
// temporary file is removed and the error names path.
func WriteAtomic(path string, fill func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp_")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = fill(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadNames returns the names in directory dir, unsorted.
func ReadNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// TouchNoFollow sets path's atime to now, its mtime kept; a symbolic
// link is touched itself, not what it names.
func TouchNoFollow(path string) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_OMIT}}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
}

// OldFile tells whether path exists and was last modified more than age
// ago.
func OldFile(path string, age time.Duration) bool {
	fi, err := os.Lstat(path)
	return err == nil && time.Since(fi.ModTime()) > age
}

// ErrNotRegular is what OpenRegular refuses.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading and returns it with its stat if it
// is a regular file. O_NONBLOCK keeps a FIFO from blocking the open until
// a writer comes (it changes nothing for a regular file). A missing
// file's error wraps fs.ErrNotExist; what is not a regular file is an
// error wrapping ErrNotRegular, naming path and what it is.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
