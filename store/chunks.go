package store

import (
	"context"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
	"golang.org/x/sys/unix"
)

// The store's chunks, through its Backend.

var _ ChunkReader = (*Store)(nil)

// ReadChunk implements ChunkReader.
func (s *Store) ReadChunk(ctx context.Context, d chunk.Digest, opt ChunkOptions) (Blob, error) {
	return s.backend.ReadChunk(ctx, d, opt)
}

// InsertChunk stores blob (an encoded DataBlob) as the chunk d. An
// existing chunk of the same size is kept and only touched (dedup); one of
// another size, or empty, is replaced. Concurrent inserts of one chunk,
// from goroutines or processes, are safe. existed tells whether the
// chunk was already there.
func (s *Store) InsertChunk(d chunk.Digest, blob []byte) (existed bool, err error) {
	return s.backend.InsertChunkParts(context.Background(), d, blob, nil)
}

// InsertChunkParts is InsertChunk for a blob given as header and payload
// (chunk.EncodeBlobParts), written without a copy.
func (s *Store) InsertChunkParts(d chunk.Digest, header, payload []byte) (existed bool, err error) {
	return s.backend.InsertChunkParts(context.Background(), d, header, payload)
}

// HasChunk reports whether chunk d exists with a non-zero size; an error
// is a look that failed (a bucket's request), not a missing chunk.
func (s *Store) HasChunk(ctx context.Context, d chunk.Digest) (bool, error) {
	return s.backend.HasChunk(ctx, d)
}

// TouchChunk marks chunk d as in use now (GC's mark).
func (s *Store) TouchChunk(d chunk.Digest) error {
	return s.backend.TouchChunk(context.Background(), d)
}

// WalkChunks calls fn for every chunk in the store.
func (s *Store) WalkChunks(ctx context.Context, fn func(chunk.Digest) error) error {
	return s.backend.WalkChunks(ctx, fn)
}

// ReadFile implements Backend.
func (s *Store) ReadFile(name string, limit int64) ([]byte, error) {
	return s.backend.ReadFile(context.Background(), name, limit)
}

// OpenIndex opens an index file named relative to the store (Backend).
func (s *Store) OpenIndex(name string) (index.Index, error) {
	return s.backend.OpenIndex(context.Background(), name)
}

// OpenIndexFile opens the index file of snap through the backend, unchecked
// against the manifest: for the readers that take what an index lists
// (known chunks of a previous backup, verify's and tape's chunk lists)
// and judge the chunks themselves.
func (s *Store) OpenIndexFile(snap Snapshot, file string) (index.Index, error) {
	return s.backend.OpenIndex(context.Background(), SnapshotFile(snap, file))
}

// What follows asks more of a chunk than a read: its stat and its
// rename (Backend's), and what only the local directory's chunk files
// allow (chunkFiles).

// ChunkPath returns the path of a chunk file.
func (s *Store) ChunkPath(d chunk.Digest) string { return localDir{s.root}.chunkPath(d) }

// ChunkInfo is what a stat of a chunk tells (Backend.StatChunk).
type ChunkInfo struct {
	Inode uint64
	Dev   uint64
	Size  int64
	Atime time.Time
}

// StatChunk stats chunk d. In a remote store it is a HEAD of the
// chunk's object: Size and, for Atime, its LastModified; no inode.
func (s *Store) StatChunk(d chunk.Digest) (ChunkInfo, error) {
	return s.backend.StatChunk(context.Background(), d)
}

// MarkBad renames chunk d to <digest>.N.bad with the first free N in 0..9
// (the tenth reuses 9) and returns the new path, so a later backup can
// write a good copy again. In a remote store the object is copied to
// the key <digest>.N.bad and then deleted (s3store/chunkinfo.go).
func (s *Store) MarkBad(d chunk.Digest) (string, error) {
	return s.backend.MarkBad(context.Background(), d)
}

// chunkFiles returns the store's chunk files, unless its chunks are on no
// local disk (a remote store).
func (s *Store) chunkFiles() (chunkFiles, bool) {
	be := s.backend
	if d, ok := be.(*dryChunks); ok {
		be = d.Backend
	}
	f, ok := be.(chunkFiles)
	return f, ok
}

// ChunkDiskDir is the local directory the chunk files are in (the
// store's .chunks), for callers that choose a read order by its disk;
// ok is false when the chunks are on no local disk (a remote store).
func (s *Store) ChunkDiskDir() (dir string, ok bool) {
	f, ok := s.chunkFiles()
	if !ok {
		return "", false
	}
	return f.chunkDir(), true
}

// ChunkSizeHint returns chunk d's stored (blob) size when the store can
// tell it without asking a server: a stat of its file, whose inode the
// read that follows finds cached. ok is false otherwise (a remote
// store; a chunk that cannot be stat'ed).
func (s *Store) ChunkSizeHint(d chunk.Digest) (size int64, ok bool) {
	if _, ok := s.chunkFiles(); !ok {
		return 0, false
	}
	ci, err := s.StatChunk(d)
	return ci.Size, err == nil
}

// PrefetchChunk asks for chunk d to be read ahead: the kernel reads its
// file into the page cache (FADV_WILLNEED). In a remote store it does
// nothing: the chunk reads prefetch there.
func (s *Store) PrefetchChunk(d chunk.Digest) {
	f, ok := s.chunkFiles()
	if !ok {
		return
	}
	// a FIFO planted as a chunk must not block the open
	file, _, err := OpenRegular(f.chunkPath(d))
	if err != nil {
		return // the read reports it
	}
	unix.Fadvise(int(file.Fd()), 0, 0, unix.FADV_WILLNEED)
	file.Close()
}

// Readahead is how many chunks a sequential reader of the store should
// load ahead: DefaultReadahead, more where each read waits on a request
// (RemoteReadahead).
func (s *Store) Readahead() int {
	if p, ok := s.backend.(Prober); ok {
		return p.Readahead()
	}
	return chunkcache.DefaultReadahead
}

// ImageChunkSize is the fixed chunk size of an image backed up without
// one given: DefaultImageChunkSize where a chunk costs a local file, and
// chunk.DefaultChunkSize (4 MiB, PBS's) where each costs requests
// (RemoteImageChunkSize).
func (s *Store) ImageChunkSize() int {
	if p, ok := s.backend.(Prober); ok {
		return p.ImageChunkSize()
	}
	return DefaultImageChunkSize
}

// ioParallelism is how many chunk requests a writer should keep in
// flight beside its hash/compress workers: 0 where each costs a local
// system call.
func (s *Store) ioParallelism() int {
	if p, ok := s.backend.(Prober); ok {
		return p.Parallelism()
	}
	return 0
}

// lookFirst tells whether a writer looks for a chunk of no base
// snapshot before it stores it (Prober.LookFirst; a local store: a
// stat).
func (s *Store) lookFirst() bool {
	if p, ok := s.backend.(Prober); ok {
		return p.LookFirst()
	}
	return true
}

// insertMissingChunk stores chunk d, which ReuseChunkContext found
// missing just now, or which was not looked for (lookFirst false): a
// remote store uploads it without looking again.
func (s *Store) insertMissingChunk(ctx context.Context, d chunk.Digest, header, payload []byte) (bool, error) {
	if p, ok := s.backend.(Prober); ok {
		return p.PutMissing(ctx, d, header, payload)
	}
	return s.backend.InsertChunkParts(ctx, d, header, payload)
}

// insertChunk is InsertChunkParts under ctx.
func (s *Store) insertChunk(ctx context.Context, d chunk.Digest, header, payload []byte) (bool, error) {
	return s.backend.InsertChunkParts(ctx, d, header, payload)
}
