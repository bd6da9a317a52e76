package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
	"golang.org/x/sys/unix"
)

// Lock is a held advisory lock (flock on a file of its own descriptor).
type Lock struct {
	f     *os.File
	lease *objstore.Lease // a remote store's group lease (s3store/leases.go)
}

// Unlock releases the lock; it is safe to call more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	if l.lease != nil {
		l.lease.ReleaseWithin(groupLeaseRelease)
		l.lease = nil
	}
	// Unlocked before the close, which alone drops the flock only when
	// no other descriptor shares the open file: a child another
	// goroutine forks holds a copy until it execs (O_CLOEXEC), and
	// under load a command run next, or in the same process, found the
	// lock still held.
	if c, err := l.f.SyscallConn(); err == nil {
		c.Control(func(fd uintptr) { unix.Flock(int(fd), unix.LOCK_UN) })
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// LockedError is a lock another process holds (it matches ErrLocked): the
// lock file, who holds it as far as this process can see, and how long
// the lock was waited for.
type LockedError struct {
	Path    string
	Holders []LockHolder
	Waited  time.Duration
	Cause   error // the context's error when the wait was cut short, else nil
}

func (e *LockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lock %s: %v", e.Path, ErrLocked)
	if len(e.Holders) == 0 {
		b.WriteString(" (holder unknown: not visible from this process)")
	}
	for i, h := range e.Holders {
		sep := ", "
		if i == 0 {
			sep = ": held by "
		}
		b.WriteString(sep + h.String())
	}
	if e.Waited > 0 {
		fmt.Fprintf(&b, "; gave up after waiting %s", e.Waited.Round(time.Millisecond))
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, " (%v)", e.Cause)
	}
	return b.String()
}

// Unwrap gives ErrLocked and the context's error, if any.
func (e *LockedError) Unwrap() []error { return []error{ErrLocked, e.Cause} }

// lockPoll is how often a waiting lock is retried at first; the pause
// doubles up to lockPollMax.
const (
	lockPoll    = 20 * time.Millisecond
	lockPollMax = 250 * time.Millisecond
)

// SetLockWait sets how long the store's locks are waited for while
// another process holds them (0, the default: not at all). The wait for a
// snapshot's manifest lock is at least manifestLockTimeout.
func (s *Store) SetLockWait(d time.Duration) { s.lockWait = max(d, 0) }

// LockWait is how long a lock another process holds is waited for.
func (s *Store) LockWait() time.Duration { return s.lockWait }

// flock takes a lock on path (created if missing, never through a
// symlink, with the store's lock file mode), retrying without blocking
// until wait has passed or ctx ends; then it fails with a *LockedError.
// An exclusive holder records itself in the file (lockholder.go).
func (s *Store) flock(ctx context.Context, path string, exclusive bool, wait time.Duration) (*Lock, error) {
	f, err := s.openLockFile(path)
	if err != nil {
		return nil, err
	}
	return flockFile(ctx, f, exclusive, wait, true)
}

// flockFile takes a flock on the open file f (closed when it fails), as
// flock does; record says whether an exclusive holder records itself in
// the file (never in a directory).
func flockFile(ctx context.Context, f *os.File, exclusive bool, wait time.Duration, record bool) (*Lock, error) {
	path := f.Name()
	var err error
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	start, pause := time.Now(), lockPoll
	for {
		err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			if exclusive && record {
				recordHolder(f)
			}
			return &Lock{f: f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			le := &LockedError{Path: path, Holders: lockHolders(f), Waited: time.Since(start)}
			if wait == 0 {
				le.Waited = 0
			}
			if cerr := context.Cause(ctx); !errors.Is(cerr, context.DeadlineExceeded) {
				le.Cause = cerr // cancelled from outside, not timed out
			}
			f.Close()
			return nil, le
		case <-t.C:
		}
		pause = min(2*pause, lockPollMax)
	}
}

// lockFileMode is the mode of lock files: only their owner may open
// them. flock needs no more than a read-only descriptor, so a lock file
// anyone else may read is one they can lock to stall the store's jobs;
// that holds for the group of a shared store too, which may read the
// backups but has no use for the locks (taking one needs write access).
const lockFileMode = 0o600

// openLockFile opens (creating) a lock file: never through a symlink, a
// regular file only, and of mode lockFileMode. A lock file of ours with
// another mode (an older store's 0644) gets that mode.
func (s *Store) openLockFile(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, lockFileMode)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("lock %s: not a regular file (mode %#o)", path, st.Mode)
	}
	if st.Mode&0o7777 != lockFileMode && st.Uid == uint32(os.Geteuid()) {
		// an old store's 0644, or the umask took the group's bits
		if err := unix.Fchmod(fd, lockFileMode); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: set mode %#o: %w", path, lockFileMode, err)
		}
	}
	return f, nil
}

// LockShared takes the store's process lock shared, as every writer of
// indexes does; GC's exclusive hold keeps it out. It waits up to the
// store's lock wait.
func (s *Store) LockShared(ctx context.Context) (*Lock, error) {
	return s.flock(ctx, filepath.Join(s.root, lockFile), false, s.lockWait)
}

// LockExclusive takes the store's process lock exclusively (GC), while
// no writer holds it shared, waiting up to the store's lock wait.
func (s *Store) LockExclusive(ctx context.Context) (*Lock, error) {
	return s.flock(ctx, filepath.Join(s.root, lockFile), true, s.lockWait)
}

// LockGroup takes the per-group backup lock: one backup per group at a
// time. It waits up to the store's lock wait. On a remote store it also
// takes the group's lease in the bucket, for one backup of the group
// across hosts.
func (s *Store) LockGroup(ctx context.Context, g Group) (*Lock, error) {
	dir := s.GroupPath(g)
	path := filepath.Join(dir, ".backup.lck")
	for range 3 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("lock group %s: %w", g, err)
		}
		l, err := s.flock(ctx, path, true, s.lockWait)
		if err != nil {
			return nil, fmt.Errorf("group %s: %w", g, err)
		}
		if l.sameFile(path) {
			if l.lease, err = s.meta.LockGroup(ctx, g); err != nil {
				l.Unlock()
				return nil, fmt.Errorf("group %s: %w", g, err)
			}
			return l, nil
		}
		l.Unlock() // the group was removed while we waited: take the new one's
	}
	return nil, fmt.Errorf("group %s: %w: removed and made again while its lock was waited for", g, ErrLocked)
}

// manifestLockTimeout bounds the wait for a snapshot's manifest lock.
const manifestLockTimeout = 5 * time.Second

// LockManifest takes a snapshot's manifest update lock, waiting five
// seconds as PBS does (or the store's lock wait, when longer).
func (s *Store) LockManifest(ctx context.Context, snap Snapshot) (*Lock, error) {
	return s.flock(ctx, filepath.Join(s.SnapshotPath(snap), ".index.json.lck"), true, max(manifestLockTimeout, s.lockWait))
}

var jobKindRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// LockJob takes the store's lock for one kind of job (verify, gc, …),
// <store>/.job-<kind>.lck, so that one job of a kind runs at a time on a
// store across processes. It waits up to the store's lock wait, then
// fails with ErrLocked.
func (s *Store) LockJob(kind string) (*Lock, error) {
	return s.LockJobContext(context.Background(), kind)
}

// LockJobContext is LockJob whose wait (SetLockWait) ends early when ctx
// does.
func (s *Store) LockJobContext(ctx context.Context, kind string) (*Lock, error) {
	if !jobKindRE.MatchString(kind) {
		return nil, fmt.Errorf("job kind %q: %w", kind, ErrBadName)
	}
	return s.flock(ctx, filepath.Join(s.root, ".job-"+kind+".lck"), true, s.lockWait)
}

// groupLeaseRelease bounds the release of a group's lease (LockGroup on
// a remote store) when its lock is unlocked.
const groupLeaseRelease = 30 * time.Second
