package tape

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
)

// clientLogName is the client log PBS puts on tape after the manifest's
// files when the snapshot has one.
const clientLogName = "client.log.blob"

// StoreSource exports from a local datastore.
type StoreSource struct {
	S *store.Store
	// StoreName is the datastore name written on tape (default: the
	// store directory's base name).
	StoreName string
	// InodeOrder reads chunks in inode order (good for rotating disks),
	// else in index order.
	InodeOrder bool
}

var (
	_ Source  = (*StoreSource)(nil)
	_ Orderer = (*StoreSource)(nil)
	_ Sizer   = (*StoreSource)(nil)
	_ Locker  = (*StoreSource)(nil)

	_ BufferLoader = (*StoreSource)(nil)
)

// Name returns the datastore name.
func (s *StoreSource) Name() string {
	if s.StoreName != "" {
		return s.StoreName
	}
	return filepath.Base(s.S.Root())
}

// ParseSnapshot parses a full snapshot name ([ns/NAME/…]TYPE/ID/TIME).
func ParseSnapshot(name string) (store.Snapshot, error) {
	r, err := store.ParseRef(name)
	if err != nil {
		return store.Snapshot{}, err
	}
	if r.Latest {
		return store.Snapshot{}, fmt.Errorf("snapshot %q: %w: a time is needed", name, store.ErrBadName)
	}
	return r.Snapshot, nil
}

func (s *StoreSource) resolve(name string) (store.Snapshot, *store.Manifest, error) {
	snap, err := ParseSnapshot(name)
	if err != nil {
		return snap, nil, err
	}
	if snap, err = s.S.Resolve(store.Ref{Snapshot: snap}); err != nil {
		return snap, nil, err
	}
	m, err := s.S.ReadManifest(snap)
	return snap, m, err
}

// SnapshotFiles returns the snapshot directory and its files in PBS's
// archive order.
func (s *StoreSource) SnapshotFiles(ctx context.Context, name string) (fs.FS, []string, error) {
	snap, m, err := s.resolve(name)
	if err != nil {
		return nil, nil, err
	}
	dir := s.S.SnapshotPath(snap)
	files := []string{store.ManifestName}
	for _, f := range m.Files {
		files = append(files, f.Filename)
	}
	if _, err := os.Stat(filepath.Join(dir, clientLogName)); err == nil {
		files = append(files, clientLogName)
	}
	return os.DirFS(dir), files, nil
}

// Chunks returns the chunks of the snapshot's indexes, each once.
func (s *StoreSource) Chunks(ctx context.Context, name string) ([]chunk.Digest, error) {
	snap, m, err := s.resolve(name)
	if err != nil {
		return nil, err
	}
	seen := map[chunk.Digest]bool{}
	out := []chunk.Digest{}
	for _, f := range m.Files {
		if _, ok := index.Kind(f.Filename); !ok {
			continue
		}
		idx, err := s.S.OpenIndexFile(snap, f.Filename)
		if err != nil {
			return nil, err
		}
		for i := range idx.Len() {
			d, _, _ := idx.Chunk(i)
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
		err = idx.Err() // entries after a fault are empty: not a list to trust
		idx.Close()
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LockSnapshot holds the snapshot locked shared, as every reader of a
// snapshot does: forget and prune refuse it until unlock.
func (s *StoreSource) LockSnapshot(ctx context.Context, name string) (func(), error) {
	snap, err := ParseSnapshot(name)
	if err != nil {
		return nil, err
	}
	l, err := s.S.LockSnapshot(ctx, snap, false)
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// LoadChunk reads a chunk's DataBlob.
func (s *StoreSource) LoadChunk(ctx context.Context, d chunk.Digest) ([]byte, error) {
	b, err := s.S.ReadChunk(ctx, d, store.ChunkOptions{})
	return b.Bytes(), err
}

// PrefetchChunk asks the store to read the chunk ahead
// (Store.PrefetchChunk).
func (s *StoreSource) PrefetchChunk(d chunk.Digest) { s.S.PrefetchChunk(d) }

// LoadChunkInto reads a chunk's DataBlob into buf.
func (s *StoreSource) LoadChunkInto(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error) {
	b, err := s.S.ReadChunk(ctx, d, store.ChunkOptions{Buf: buf})
	return b.Bytes(), err
}

// ChunkSize returns the size of a chunk's blob when the store can tell
// it cheaply (Store.ChunkSizeHint: a stat whose inode the read that
// follows finds cached; a remote store tells none).
func (s *StoreSource) ChunkSize(d chunk.Digest) (int64, bool) { return s.S.ChunkSizeHint(d) }

// OrderChunks sorts by inode when InodeOrder is set; chunks that cannot
// be stat'ed go last (their read reports the error).
func (s *StoreSource) OrderChunks(ctx context.Context, ds []chunk.Digest) []chunk.Digest {
	if !s.InodeOrder {
		return ds
	}
	type ino struct {
		d  chunk.Digest
		in uint64
		ok bool
	}
	list := make([]ino, len(ds))
	for i, d := range ds {
		ci, err := s.S.StatChunk(d)
		list[i] = ino{d, ci.Inode, err == nil}
		if ctx.Err() != nil {
			return ds
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].ok != list[j].ok {
			return list[i].ok
		}
		return list[i].in < list[j].in
	})
	out := make([]chunk.Digest, len(ds))
	for i := range list {
		out[i] = list[i].d
	}
	return out
}
