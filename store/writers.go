package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store/internal/fsutil"
	"github.com/cairnfs/cairn/store/objstore"
	"golang.org/x/sys/unix"
)

// writersDir holds one file per running writer (a backup, a tape restore
// into the store), named "<start in Unix ns>-<pid>-<random>" and locked
// by its writer until it ends. Garbage collection takes the oldest start
// of a live writer as a bound on its cutoff (OldestWriter); a file whose
// lock is free belongs to a writer that died and is removed.
//
// A writer creates its file under a ".new-" name, locks it and only then
// renames it into place, so a file under a final name is locked from its
// first moment: GC cannot take a writer that is starting for a dead one.
const writersDir = ".writers"

const newWriterPrefix = ".new-"

// Writer is a registered running writer.
type Writer struct {
	f     *os.File
	path  string
	start time.Time
	meta  MetaStore       // the store's, when lease is not nil
	lease *objstore.Lease // a remote store's: the writer's lease in the bucket (s3store/leases.go)
	log   *slog.Logger    // the store's
}

// Start is when the writer registered: every chunk it touches or writes
// afterwards has an atime no older than this. On a remote store it is
// the server time its lease in the bucket was created.
func (w *Writer) Start() time.Time {
	if w.lease != nil {
		return w.lease.Start()
	}
	return w.start
}

// Done ends the registration; it is safe to call more than once.
func (w *Writer) Done() {
	if w == nil || w.f == nil {
		return
	}
	if w.lease != nil {
		if err := w.meta.ReleaseWriter(context.Background(), w.lease); err != nil {
			w.log.Warn("writer registry: could not drop this writer (the next GC drops it)", "lease", w.lease.Key(), "err", err)
		}
		w.lease = nil
	}
	os.Remove(w.path)
	w.f.Close()
	w.f = nil
}

// RegisterWriter records a running writer until Done. A backup registers
// before it looks at any chunk. On a remote store the writer also holds a
// lease in the bucket (s3store/leases.go).
func (s *Store) RegisterWriter() (*Writer, error) {
	return s.registerWriter(context.Background())
}

func (s *Store) registerWriter(ctx context.Context) (*Writer, error) {
	dir := filepath.Join(s.root, writersDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("register writer: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("register writer: %s is not a directory", dir)
	}
	start := time.Now()
	tmp, err := os.CreateTemp(dir, newWriterPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("register writer: %w", err)
	}
	// Waiting, not LOCK_NB: the file is ours alone, but OldestWriter may
	// be probing it (lockedByOther takes a shared lock for an instant);
	// failing then made a backup beside a GC fail at random.
	if err := unix.Flock(int(tmp.Fd()), unix.LOCK_EX); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("register writer: lock %s: %w", tmp.Name(), err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	name := fmt.Sprintf("%d-%d-%s", start.UnixNano(), os.Getpid(), hex.EncodeToString(rnd[:]))
	w := &Writer{f: tmp, path: filepath.Join(dir, name), start: start, log: s.log}
	if err := os.Rename(tmp.Name(), w.path); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("register writer: %w", err)
	}
	l, err := s.meta.RegisterWriter(ctx)
	if err != nil {
		w.Done()
		return nil, err
	}
	w.meta, w.lease = s.meta, l
	return w, nil
}

// staleNewWriter is the age after which an unlocked ".new-" file is taken
// for the leftover of a writer killed while it registered.
const staleNewWriter = time.Minute

// OldestWriter returns the start of the oldest live writer (ok false when
// none runs), removing the files of writers that died.
func (s *Store) OldestWriter() (oldest time.Time, ok bool, err error) {
	dir := filepath.Join(s.root, writersDir)
	names, err := fsutil.ReadNames(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("list writers: %w", err)
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		start, valid := writerStart(name)
		live, err := lockedByOther(path)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, fsutil.ErrNotRegular) {
			continue // no writer makes one: not a writer's file
		}
		if errors.Is(err, unix.ENOENT) {
			continue // ended since the listing: its snapshot is finished before GC's phase 1 lists it
		}
		if err != nil || live {
			// a writer whose lock cannot be checked counts as running:
			// an older cutoff only keeps more
			if valid && (!ok || start.Before(oldest)) {
				oldest, ok = start, true
			}
			continue
		}
		if valid || strings.HasPrefix(name, newWriterPrefix) && fsutil.OldFile(path, staleNewWriter) {
			os.Remove(path)
		}
	}
	return oldest, ok, nil
}

// writerStart reads a writer file's name.
func writerStart(name string) (time.Time, bool) {
	ns, _, found := strings.Cut(name, "-")
	if !found {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// lockedByOther reports whether another open file description holds a
// flock on the regular file at path.
func lockedByOther(path string) (bool, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, fsutil.ErrNotRegular
	}
	err = unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}
