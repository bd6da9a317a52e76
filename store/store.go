package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/store/chunkcache"
	"golang.org/x/sync/errgroup"

	"golang.org/x/sys/unix"
)

// Sentinel errors of the store, matched with errors.Is.
var (
	ErrNotStore      = errors.New("not a cairn/PBS datastore (no .chunks directory)")
	ErrNoStore       = errors.New("no store there") // Open: the directory does not exist
	ErrExists        = errors.New("already exists")
	ErrNotFound      = errors.New("not found")
	ErrLocked        = errors.New("locked by another process")
	ErrBadManifest   = errors.New("bad manifest")
	ErrBadName       = errors.New("bad name")
	ErrUnfinished    = errors.New("snapshot is unfinished (no manifest)")
	ErrCorruptChunk  = chunkcache.ErrCorrupt // the chunk cache's: one error
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
	root    string
	backend Backend   // where its chunks live: the directory root, or a bucket
	meta    MetaStore // where its snapshot metadata lives beyond root (meta.go)

	mu     sync.Mutex
	lockFD int // process lock fd, -1 when not held
	shared int // number of shared holders in this process

	lockWait time.Duration // how long a lock another process holds is waited for
	keys     *Keys         // SetKeys': the keys readers may use (keys.go)
	log      *slog.Logger  // OpenOptions.Logger: what the store and its remote log
}

// OpenOptions tune OpenWith.
type OpenOptions struct {
	// Logger receives what the store and a remote store's bucket client
	// log (warnings, retries); nil: nothing is logged.
	Logger *slog.Logger
}

// CreateOptions tune Create.
type CreateOptions struct {
	// LazyPrefixDirs skips creating the 65,536 chunk prefix directories
	// up front; cairn creates each on first use. PBS expects them all,
	// so only tests and throw-away stores should set it.
	LazyPrefixDirs bool
	// Group shares the store with one group (as PBS's backup group): its
	// directories are 0750 and set-group-ID (what is made in them belongs
	// to the group too). Without it the store is
	// 0700 and lock files 0600: no other user can read the store or take
	// one of its locks.
	Group *int // a gid
	// Progress, when set, counts the chunk prefix directories made as
	// they are made (PrefixDirs in all), for a progress display.
	Progress *atomic.Int64
	// Logger is the opened store's (OpenOptions.Logger).
	Logger *slog.Logger
}

// Create lays out a new datastore in dir (which may exist but must be
// empty of a store) and opens it.
func Create(dir string) (*Store, error) { return CreateWith(dir, CreateOptions{}) }

// CreateWith is Create with options.
func CreateWith(dir string, opt CreateOptions) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, chunkDir)); err == nil {
		return nil, fmt.Errorf("create store %s: %w", dir, ErrExists)
	}
	if !opt.LazyPrefixDirs {
		if err := checkInodes(dir); err != nil {
			return nil, fmt.Errorf("create store %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	dirMode, prefixMode := uint32(0o700), uint32(0o700)
	if opt.Group != nil {
		dirMode, prefixMode = 0o2750, 0o750
		if err := os.Chown(dir, -1, *opt.Group); err != nil {
			return nil, fmt.Errorf("create store: %w", err)
		}
	}
	// Set the mode explicitly: dir may exist with another one, and the
	// umask may take group bits away.
	if err := unix.Chmod(dir, dirMode); err != nil {
		return nil, fmt.Errorf("create store %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(dir, ".chunks.tmp")
	if err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	if opt.LazyPrefixDirs {
		// nothing: InsertChunk makes each prefix directory on first use
	} else if err := makePrefixDirs(tmp, prefixMode, opt.Progress); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("create store %s: %w", dir, err)
	}
	if err := unix.Chmod(tmp, dirMode); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("create store: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, chunkDir)); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("create store %s: %w", dir, err)
	}
	s, err := OpenWith(dir, OpenOptions{Logger: opt.Logger})
	if err != nil {
		return nil, err
	}
	f, err := s.openLockFile(filepath.Join(dir, lockFile))
	if err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	defer f.Close()
	if err := f.Chmod(lockFileMode); err != nil { // whatever the umask
		return nil, fmt.Errorf("create store: %w", err)
	}
	return s, nil
}

// Open opens an existing datastore; it logs nothing (OpenWith).
func Open(dir string) (*Store, error) { return openWith(dir, nil, OpenOptions{}) }

// OpenWith is Open with options.
func OpenWith(dir string, opt OpenOptions) (*Store, error) { return openWith(dir, nil, opt) }

// openWith opens dir; a remote store with remote (nil: the registered
// way: remote.go).
func openWith(dir string, remote RemoteOpener, opt OpenOptions) (*Store, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open store %s: %w (%w)", dir, ErrNoStore, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open store %s: not a directory", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &Store{root: abs, backend: localDir{abs}, lockFD: -1, log: opt.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.meta = localMeta{s}
	isRem, err := isRemote(abs)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	if isRem {
		if err := s.openRemote(context.Background(), remote); err != nil {
			return nil, err
		}
		return s, nil
	}
	ci, err := os.Stat(filepath.Join(dir, chunkDir))
	if err != nil || !ci.IsDir() {
		return nil, fmt.Errorf("open store %s: %w", dir, ErrNotStore)
	}
	return s, nil
}

// Logger is the store's logger (OpenOptions.Logger): what reads and
// writes it log, and a remote store's bucket client, go there.
func (s *Store) Logger() *slog.Logger { return s.log }

// Root returns the store's absolute directory.
func (s *Store) Root() string { return s.root }

// Close releases what the store holds.
func (s *Store) Close() error {
	err := s.meta.Close(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lockFD >= 0 {
		unix.Close(s.lockFD)
		s.lockFD = -1
		s.shared = 0
	}
	return err
}

// notFound maps fs.ErrNotExist to ErrNotFound while keeping the cause.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

// makePrefixDirs creates the 65,536 chunk prefix directories in dir. Some
// file systems are slow enough per mkdir that one goroutine takes
// seconds, so several goroutines share the work.
func makePrefixDirs(dir string, mode uint32, made *atomic.Int64) error {
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
				if err := unix.Mkdirat(fd, string(name[:]), mode); err != nil && !errors.Is(err, unix.EEXIST) {
					return fmt.Errorf("%s/%s: %w", dir, name, err)
				}
				if mode&0o070 != 0 { // the group's bits, whatever the umask
					if err := unix.Fchmodat(fd, string(name[:]), mode|unix.S_ISGID, 0); err != nil {
						return fmt.Errorf("%s/%s: %w", dir, name, err)
					}
				}
				if made != nil {
					made.Add(1)
				}
			}
			return nil
		})
	}
	return g.Wait()
}
