package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// A remote store keeps its chunks and snapshot files elsewhere (a
// bucket) and its directory as a mirror and a workspace. Its code lives
// in a package of its own (store/s3store), which imports this one: it
// registers how a remote store is opened (RegisterRemote, as a
// database/sql driver registers itself), and Open, finding
// RemoteConfigName in a store's directory, opens it that way. A program
// that opens stores imports that package (cmd/cairn/cli does; so does
// storetest); one that does not gets ErrNoRemote.

// RemoteConfigName is the file in a remote store's directory naming
// where it is kept (mode 0600); its contents are the remote kind's.
const RemoteConfigName = "remote.json"

// ErrNoRemote is opening a remote store in a program that registered no
// way to open one (RegisterRemote).
var ErrNoRemote = errors.New("a remote store, but no remote store implementation in this program (import store/s3store)")

// Remote is what opening a remote store gives the Store: its two seams,
// and what to do once the Store has them.
type Remote struct {
	Backend Backend
	Meta    MetaStore
	// Opened, when not nil, runs once the Store has both (a first
	// refresh of the mirror); its error fails Open.
	Opened func(ctx context.Context) error
}

// RemoteOpener opens s, a store whose directory (s.Root()) holds
// RemoteConfigName.
type RemoteOpener func(ctx context.Context, s *Store) (Remote, error)

var remoteOpener struct {
	sync.Mutex
	open RemoteOpener
}

// RegisterRemote makes open the way Open opens a remote store. It is
// called once, from the init of the package that implements remote
// stores; a second call replaces the first.
func RegisterRemote(open RemoteOpener) {
	remoteOpener.Lock()
	defer remoteOpener.Unlock()
	remoteOpener.open = open
}

func registeredRemote() RemoteOpener {
	remoteOpener.Lock()
	defer remoteOpener.Unlock()
	return remoteOpener.open
}

// OpenRemote opens the remote store in dir with open instead of the
// registered way (store/s3store's OpenOn: a bucket of the caller's,
// which logs through its own logger: the Store's is opt's).
func OpenRemote(dir string, open RemoteOpener, opt OpenOptions) (*Store, error) {
	return openWith(dir, open, opt)
}

// openRemote opens s with open (nil: the registered one) and sets its
// seams.
func (s *Store) openRemote(ctx context.Context, open RemoteOpener) error {
	if open == nil {
		if open = registeredRemote(); open == nil {
			return fmt.Errorf("open store %s: %w", s.root, ErrNoRemote)
		}
	}
	r, err := open(ctx, s)
	if err != nil {
		return err
	}
	s.backend, s.meta = r.Backend, r.Meta
	if r.Opened != nil {
		return r.Opened(ctx)
	}
	return nil
}

// isRemote tells whether dir holds RemoteConfigName.
func isRemote(dir string) (bool, error) {
	_, err := os.Lstat(filepath.Join(dir, RemoteConfigName))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Meta is the seam s's snapshot metadata goes through beyond its
// directory (a remote store's package finds its own in it).
func (s *Store) Meta() MetaStore { return s.meta }

// CreateDir lays out the directory a remote store keeps locally: dir,
// with the modes Create gives a store (opt.Group), and its lock file; no
// chunk directory.
func CreateDir(dir string, opt CreateOptions) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	mode := uint32(0o700)
	if opt.Group != nil {
		mode = 0o2750
		if err := os.Chown(dir, -1, *opt.Group); err != nil {
			return err
		}
	}
	if err := unix.Chmod(dir, mode); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, lockFileMode)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Chmod(lockFileMode)
}
