package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotRegular matches the error of Open for what is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge matches the error of ReadAll for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// NotRegularError is what Open returns for a path that is not a regular
// file: "PATH: is a FIFO, not a regular file".
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Is makes a *NotRegularError match ErrNotRegular.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Kind names a file's type as an error message says it: "a FIFO", "a
// directory", "a character device", ….
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	default:
		return "an irregular file (" + t.String() + ")"
	}
}

// Options change what Open accepts besides a regular file.
type Options uint

const (
	// NoFollow refuses a symbolic link (checked with lstat, opened with
	// O_NOFOLLOW); without it a link is followed to the file it names.
	NoFollow Options = 1 << iota
	// Pipe also accepts an anonymous pipe: what `--password-file
	// <(pass show x)` or /dev/stdin on a pipe names, and how `mount
	// --daemon` hands its child a passphrase (/dev/fd/5). Opening one
	// never waits (the kernel makes only a named FIFO wait for a
	// writer), and reading it is reading a stream, as from standard
	// input. A named FIFO stays refused: told apart by the file system
	// it lives on (pipefs), checked before and after the open.
	Pipe
)

// Open opens path for reading if it is a regular file (or an anonymous
// pipe, with Pipe), without blocking (see the package doc), and returns
// it with its fstat. Errors name path; a missing file's wraps
// fs.ErrNotExist, what is not a regular file is a *NotRegularError.
func Open(path string, o Options) (*os.File, fs.FileInfo, error) {
	stat, flag := os.Stat, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY
	if o&NoFollow != 0 {
		stat, flag = os.Lstat, flag|unix.O_NOFOLLOW
	}
	fi, err := stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !accepted(fi, o, func(st *unix.Statfs_t) error { return unix.Statfs(path, st) }) {
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err = f.Stat()
	if err == nil && !accepted(fi, o, func(st *unix.Statfs_t) error { return unix.Fstatfs(int(f.Fd()), st) }) {
		err = &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// accepted says whether fi is what Open takes: a regular file, or with
// Pipe a FIFO on pipefs (an anonymous pipe), which statfs tells.
func accepted(fi fs.FileInfo, o Options, statfs func(*unix.Statfs_t) error) bool {
	if fi.Mode().IsRegular() {
		return true
	}
	if o&Pipe == 0 || fi.Mode().Type() != fs.ModeNamedPipe {
		return false
	}
	var st unix.Statfs_t
	return statfs(&st) == nil && st.Type == unix.PIPEFS_MAGIC
}

// ReadAll reads f (named path in errors) to its end, refusing more than
// limit bytes (ErrTooLarge) after reading limit+1 at most.
func ReadAll(f *os.File, path string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	switch {
	case err != nil:
		clear(b)
		return nil, fmt.Errorf("%s: %w", path, err)
	case int64(len(b)) > limit:
		clear(b)
		return nil, fmt.Errorf("%s: larger than %d bytes: %w", path, limit, ErrTooLarge)
	}
	return b, nil
}

// Read reads the file at path as Open takes it, refusing more than limit
// bytes: Open and ReadAll.
func Read(path string, limit int64, o Options) ([]byte, error) {
	f, _, err := Open(path, o)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, limit)
}
