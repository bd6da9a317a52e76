package store

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// What garbage collection's sweep needs of the local directory: a chunk
// prefix directory opened once, listed with each file's times and size,
// and conditional removal that closes the race with writers in other
// processes. Which entry goes is jobs/gc's decision; how it goes safely
// is the store's.

// PrefixDirs is the number of chunk prefix directories (0000 to ffff).
const PrefixDirs = prefixDir

// EntryKind is what a file in a chunk prefix directory is, by its name.
type EntryKind uint8

// Entry kinds. Names of no kind are never listed, so never removed.
const (
	// EntryChunk is a chunk: <digest> (64 lower-case hex digits).
	EntryChunk EntryKind = iota + 1
	// EntryBad is a chunk verify moved aside: <digest>.N.bad (N 0-9).
	EntryBad
	// EntryTemp is a writer's temporary file: <digest>.tmp_*.
	EntryTemp
	// EntryAside is a chunk or bad copy that a sweep renamed aside to
	// re-check it and was killed before it removed it or put it back:
	// .<name>.gc.
	EntryAside
)

// asideSuffix ends the hidden name a sweep renames a candidate to.
const asideSuffix = ".gc"

// AsideName is the hidden name Remove renames an entry to: a name no
// reader or writer of chunks looks up, in the same directory.
func AsideName(name string) string { return "." + name + asideSuffix }

// ChunkEntry is one file of a prefix directory.
type ChunkEntry struct {
	Name  string
	Kind  EntryKind
	Size  int64
	Atime time.Time
	// Changed is the later of mtime and ctime: when the file was last
	// written or renamed (what a temporary file's age is measured by).
	Changed time.Time
}

// Target is, for an EntryAside, the name it is put back under.
func (e ChunkEntry) Target() string {
	return strings.TrimSuffix(strings.TrimPrefix(e.Name, "."), asideSuffix)
}

// TargetKind is, for an EntryAside, the kind of what it is put back as
// (EntryChunk or EntryBad).
func (e ChunkEntry) TargetKind() EntryKind { return EntryKindOf(e.Target()) }

// PrefixDir is an open chunk prefix directory. It is not safe for
// concurrent use; the sweep gives each worker its own.
type PrefixDir struct {
	fd   int
	path string
	buf  *[]byte // directory entries, from direntBufs
	// afterAside, if set, runs between the rename aside and the re-check
	// (tests: a writer touching the chunk just then).
	afterAside func(name string)
}

// OpenPrefixDir opens prefix directory i (0 to PrefixDirs-1), never
// through a symlink. A directory that does not exist (a lazily created
// store) is an error wrapping ErrNotFound. A sweep opens them all
// through one ChunkDir instead.
func (s *Store) OpenPrefixDir(i int) (*PrefixDir, error) {
	c, err := s.OpenChunkDir()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Prefix(i)
}

// ChunkDir is the open chunk directory (.chunks), through which a sweep
// opens the prefix directories without looking up the store's path
// 65,536 times. Safe for concurrent use until Close.
type ChunkDir struct {
	fd   int
	path string
}

// OpenChunkDir opens the store's chunk directory, never through a
// symlink.
func (s *Store) OpenChunkDir() (*ChunkDir, error) {
	path := s.root + "/" + chunkDir
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, notFound(err))
	}
	return &ChunkDir{fd: fd, path: path}, nil
}

// Close closes the chunk directory.
func (c *ChunkDir) Close() error { return unix.Close(c.fd) }

// Prefix opens prefix directory i (0 to PrefixDirs-1), never through a
// symlink; one that does not exist is an error wrapping ErrNotFound.
func (c *ChunkDir) Prefix(i int) (*PrefixDir, error) {
	if i < 0 || i >= PrefixDirs {
		return nil, fmt.Errorf("chunk prefix directory %d: %w: want 0 to %d", i, ErrBadName, PrefixDirs-1)
	}
	const hexdigits = "0123456789abcdef"
	name := string([]byte{hexdigits[i>>12&0xf], hexdigits[i>>8&0xf], hexdigits[i>>4&0xf], hexdigits[i&0xf]})
	fd, err := unix.Openat(c.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &prefixOpenError{dir: c.path, name: name, err: err}
	}
	return &PrefixDir{fd: fd, path: c.path + "/" + name, buf: direntBufs.Get().(*[]byte)}, nil
}

// prefixOpenError is a prefix directory that would not open. It is
// formatted only when printed: a sweep of a lazily created store meets
// up to 65,536 missing directories and skips them all.
type prefixOpenError struct {
	dir, name string
	err       error
}

func (e *prefixOpenError) Error() string {
	return fmt.Sprintf("open %s/%s: %v", e.dir, e.name, notFound(e.err))
}

// Unwrap gives the cause, and ErrNotFound when the directory is missing.
func (e *prefixOpenError) Unwrap() []error {
	if errors.Is(e.err, fs.ErrNotExist) {
		return []error{ErrNotFound, e.err}
	}
	return []error{e.err}
}

// direntBufs are the buffers PrefixDirs read directory entries into: a
// sweep opens 65,536 directories, so they are reused.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// Path is the directory's path, for messages.
func (d *PrefixDir) Path() string { return d.path }

// Close closes the directory.
func (d *PrefixDir) Close() error {
	if d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	direntBufs.Put(d.buf)
	d.buf = nil
	return err
}

// List appends the directory's entries of a known kind that are regular
// files to out and returns it. Files that vanish while listed are left
// out. A directory is listed once.
func (d *PrefixDir) List(out []ChunkEntry) ([]ChunkEntry, error) {
	if d.fd < 0 {
		return out, fmt.Errorf("list %s: closed", d.path)
	}
	buf := *d.buf
	var names []string
	for {
		n, err := unix.Getdents(d.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("list %s: %w", d.path, err)
		}
		if n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names[:0])
		for _, name := range names {
			kind := EntryKindOf(name)
			if kind == 0 {
				continue
			}
			e, ok, err := d.stat(name)
			if err != nil {
				return out, err
			}
			if ok {
				e.Kind = kind
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// stat stats name in the directory without following a symlink; ok is
// false when it is gone or not a regular file.
func (d *PrefixDir) stat(name string) (ChunkEntry, bool, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return ChunkEntry{}, false, nil
		}
		return ChunkEntry{}, false, fmt.Errorf("stat %s/%s: %w", d.path, name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ChunkEntry{}, false, nil
	}
	e := ChunkEntry{Name: name, Size: st.Size, Atime: time.Unix(st.Atim.Sec, st.Atim.Nsec)}
	e.Changed = time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
	if c := time.Unix(st.Ctim.Sec, st.Ctim.Nsec); c.After(e.Changed) {
		e.Changed = c
	}
	return e, true, nil
}

// EntryKindOf tells a prefix directory's file by its name; 0 for a name
// of no kind.
func EntryKindOf(name string) EntryKind {
	if len(name) > 1+len(asideSuffix) && name[0] == '.' && strings.HasSuffix(name, asideSuffix) {
		switch EntryKindOf(name[1 : len(name)-len(asideSuffix)]) {
		case EntryChunk, EntryBad:
			return EntryAside
		}
		return 0
	}
	if len(name) < 64 || !isLowerHex(name[:64]) {
		return 0
	}
	rest := name[64:]
	switch {
	case rest == "":
		return EntryChunk
	case len(rest) == 6 && rest[0] == '.' && rest[1] >= '0' && rest[1] <= '9' && rest[2:] == ".bad":
		return EntryBad
	case strings.HasPrefix(rest, ".tmp_") && isTempSuffix(rest[5:]):
		return EntryTemp
	}
	return 0
}

// isTempSuffix tells the random part of a temporary name (os.CreateTemp's
// digits, PBS's letters and digits).
func isTempSuffix(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && c != '_' {
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
