package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sync/errgroup"

	"golang.org/x/sys/unix"
)

// Sentinel errors of the store, matched with errors.Is.
var (
	ErrNotStore      = errors.New("not a cairn/PBS datastore (no .chunks directory)")
	ErrExists        = errors.New("already exists")
	ErrNotFound      = errors.New("not found")
	ErrLocked        = errors.New("locked by another process")
	ErrBadIndex      = errors.New("bad index file")
	ErrBadManifest   = errors.New("bad manifest")
	ErrBadName       = errors.New("bad name")
	ErrUnfinished    = errors.New("snapshot is unfinished (no manifest)")
	ErrCorruptChunk  = errors.New("corrupt chunk")
	ErrMissingChunk  = errors.New("missing chunk")
	ErrSnapshotInUse = errors.New("snapshot in use")
)

const (
	chunkDir  = ".chunks"
	lockFile  = ".lock"
	prefixDir = 1 << 16
)

// Store is a datastore on a local directory. It is safe for concurrent
// use by many goroutines; several processes may share one store.
type Store struct {
	root string

	mu     sync.Mutex
	lockFD int // process lock fd, -1 when not held
	shared int // number of shared holders in this process
}

// CreateOptions tune Create.
type CreateOptions struct {
	// LazyPrefixDirs skips creating the 65,536 chunk prefix directories
	// up front; cairn creates each on first use. PBS expects them all,
	// so only tests and throw-away stores should set it.
	LazyPrefixDirs bool
}

// Create lays out a new datastore in dir (which may exist but must be
// empty of a store) and opens it.
func Create(dir string) (*Store, error) { return CreateWith(dir, CreateOptions{}) }

// CreateWith is Create with options.
func CreateWith(dir string, opt CreateOptions) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, chunkDir)); err == nil {
		return nil, fmt.Errorf("create store %s: %w", dir, ErrExists)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".chunks.tmp")
	if err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	if opt.LazyPrefixDirs {
		// nothing: InsertChunk makes each prefix directory on first use
	} else if err := makePrefixDirs(tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("create store %s: %w", dir, err)
	}
	if err := os.Chmod(tmp, 0o750); err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, chunkDir)); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("create store %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	f.Close()
	return Open(dir)
}

// Open opens an existing datastore.
func Open(dir string) (*Store, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open store %s: not a directory", dir)
	}
	ci, err := os.Stat(filepath.Join(dir, chunkDir))
	if err != nil || !ci.IsDir() {
		return nil, fmt.Errorf("open store %s: %w", dir, ErrNotStore)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &Store{root: abs, lockFD: -1}, nil
}

// Root returns the store's absolute directory.
func (s *Store) Root() string { return s.root }

// Close releases what the store holds.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lockFD >= 0 {
		unix.Close(s.lockFD)
		s.lockFD = -1
		s.shared = 0
	}
	return nil
}

// notFound maps fs.ErrNotExist to ErrNotFound while keeping the cause.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

// makePrefixDirs creates the 65,536 chunk prefix directories in dir. Some
// file systems take over 100 µs per mkdir, so several goroutines share
// the work.
func makePrefixDirs(dir string) error {
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(fd)
	const workers = 8
	var g errgroup.Group
	for w := 0; w < workers; w++ {
		g.Go(func() error {
			var name [4]byte
			const hexdigits = "0123456789abcdef"
			for i := w; i < prefixDir; i += workers {
				for k := 0; k < 4; k++ {
					name[k] = hexdigits[(i>>(12-4*k))&0xf]
				}
				if err := unix.Mkdirat(fd, string(name[:]), 0o750); err != nil && !errors.Is(err, unix.EEXIST) {
					return fmt.Errorf("%s/%s: %w", dir, name, err)
				}
			}
			return nil
		})
	}
	return g.Wait()
}
