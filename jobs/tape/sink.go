package tape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
)

// Sink is where Restore puts chunks and snapshots.
type Sink interface {
	HasChunk(d chunk.Digest) bool
	// InsertChunk stores a checked chunk; called from several goroutines.
	InsertChunk(d chunk.Digest, blob []byte) (existed bool, err error)
	// HasSnapshot reports whether a finished snapshot of that name exists.
	HasSnapshot(snapshot string) (bool, error)
	// NewSnapshot starts writing a snapshot that stays invisible (not
	// finished) until Commit.
	NewSnapshot(ctx context.Context, snapshot string) (SnapshotWriter, error)
}

// SnapshotWriter receives a snapshot's files.
type SnapshotWriter interface {
	Create(name string) (io.WriteCloser, error)
	Commit() error
	Abort()
}

// StoreSink restores into a local datastore. It holds the store's shared
// lock and the backup locks of the groups it writes until Close, and is
// registered as a writer (store.RegisterWriter) meanwhile: every chunk
// its snapshots reference is written or touched after that start, which
// GC's cutoff respects.
type StoreSink struct {
	s      *store.Store
	lock   *store.Lock
	writer *store.Writer
	groups map[store.Group]*store.Lock
}

var _ Sink = (*StoreSink)(nil)

// NewStoreSink takes the store's shared lock and registers a writer.
func NewStoreSink(ctx context.Context, s *store.Store) (*StoreSink, error) {
	l, err := s.LockShared(ctx)
	if err != nil {
		return nil, err
	}
	w, err := s.RegisterWriter()
	if err != nil {
		l.Unlock()
		return nil, err
	}
	return &StoreSink{s: s, lock: l, writer: w, groups: map[store.Group]*store.Lock{}}, nil
}

// Close ends the writer's registration and releases the locks; a group
// it made and left without snapshots (every one failed) is removed.
func (k *StoreSink) Close() error {
	k.writer.Done()
	for g, l := range k.groups {
		k.s.DropEmptyGroup(g)
		l.Unlock()
	}
	return k.lock.Unlock()
}

// HasChunk reports whether the store has the chunk, touching it: the
// restored snapshot will reference it, and a GC running meanwhile must
// keep it (store.RefreshChunk). A chunk found gone, or that cannot be
// touched, is restored from tape.
func (k *StoreSink) HasChunk(d chunk.Digest) bool {
	if has, err := k.s.HasChunk(context.Background(), d); err != nil || !has {
		return false
	}
	ok, err := k.s.RefreshChunk(nil, d)
	return ok && err == nil
}

// InsertChunk inserts a chunk.
func (k *StoreSink) InsertChunk(d chunk.Digest, blob []byte) (bool, error) {
	return k.s.InsertChunk(d, blob)
}

// HasSnapshot reports whether the snapshot exists finished.
func (k *StoreSink) HasSnapshot(name string) (bool, error) {
	snap, err := ParseSnapshot(name)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(filepath.Join(k.s.SnapshotPath(snap), store.ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// NewSnapshot creates the snapshot directory (removing an unfinished one
// left by an earlier failed restore) under the group's backup lock.
func (k *StoreSink) NewSnapshot(ctx context.Context, name string) (SnapshotWriter, error) {
	snap, err := ParseSnapshot(name)
	if err != nil {
		return nil, err
	}
	if k.groups[snap.Group] == nil {
		l, err := k.s.LockGroup(ctx, snap.Group)
		if err != nil {
			return nil, err
		}
		k.groups[snap.Group] = l
	}
	dir := k.s.SnapshotPath(snap)
	if ok, err := k.HasSnapshot(name); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("snapshot %s: %w", name, store.ErrExists)
		}
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", name, err)
	}
	return &snapshotDir{dir: dir, name: name, s: k.s, snap: snap}, nil
}

// snapshotDir writes a snapshot's files; the manifest goes to a hidden
// name and is renamed into place last, which finishes the snapshot.
type snapshotDir struct {
	dir, name   string
	hasManifest bool
	s           *store.Store
	snap        store.Snapshot
}

const manifestTmp = ".index.json.blob.restore"

// checkFileName refuses a file name of a snapshot archive that is no
// name of a snapshot's file.
func checkFileName(name string) error {
	if name == "" || strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("bad file name %q", name)
	}
	return nil
}

func (s *snapshotDir) Create(name string) (io.WriteCloser, error) {
	if err := checkFileName(name); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", s.name, err)
	}
	path := filepath.Join(s.dir, name)
	if name == store.ManifestName {
		path, s.hasManifest = filepath.Join(s.dir, manifestTmp), true
	}
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
}

func (s *snapshotDir) Commit() error {
	if !s.hasManifest {
		return fmt.Errorf("snapshot %s: the archive holds no %s", s.name, store.ManifestName)
	}
	fd, err := unix.Open(s.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("snapshot %s: syncfs: %w", s.name, err)
	}
	if err := s.s.CommitManifest(context.Background(), s.snap, manifestTmp); err != nil {
		return fmt.Errorf("snapshot %s: %w", s.name, err)
	}
	return unix.Fsync(fd)
}

func (s *snapshotDir) Abort() { os.RemoveAll(s.dir) }
