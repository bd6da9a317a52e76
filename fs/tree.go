package fs

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
)

// TreeOpener opens the file archives (pxar) of snapshots as trees. A pxar
// accessor implements it; until one is plugged in through Options.Trees,
// file archives are left out of the mount.
type TreeOpener interface {
	// OpenTree opens archive a. streams opens one of a.Files (the
	// metadata and payload indexes of a split archive, or the single
	// .pxar.didx) as a reader through the mount's chunk cache.
	OpenTree(ctx context.Context, a store.Archive, streams StreamOpener) (ArchiveTree, error)
}

// StreamOpener opens one index file of an archive's snapshot, checked
// against the manifest, as a Stream.
type StreamOpener func(ctx context.Context, file string) (Stream, error)

// Stream is an archive's data stream: random reads through the mount's
// shared cache, with read-ahead for sequential readers.
type Stream interface {
	io.ReaderAt
	ReadAtContext(ctx context.Context, p []byte, off int64) (int, error)
	Size() int64
	Close() error
}

// ArchiveTree is an opened file archive. Its methods are called
// concurrently. Errors wrap store.ErrNotFound for a name that does not
// exist and a *chunkcache.ReadError for a chunk that cannot be read.
type ArchiveTree interface {
	Root(ctx context.Context) (TreeEntry, error)
	// Entry returns the entry whose TreeEntry.Ref is ref, decoded again:
	// the mount keeps only the Ref of each entry the kernel looked up.
	Entry(ctx context.Context, ref TreeRef) (TreeEntry, error)
	Lookup(ctx context.Context, dir TreeEntry, name string) (TreeEntry, error)
	// ReadDir opens a listing of a directory: its entries in a stable
	// order, never all held in memory.
	ReadDir(ctx context.Context, dir TreeEntry) (DirStream, error)
	// Open returns a regular file's content.
	Open(ctx context.Context, file TreeEntry) (TreeFile, error)
	Readlink(ctx context.Context, link TreeEntry) (string, error)
	Xattrs(ctx context.Context, e TreeEntry) ([]Xattr, error)
	Close() error
}

// DirStream is an open listing of a directory of an ArchiveTree. Each
// entry has a position, a cookie for the entries from it on: 0 for the
// first, and the one Next returns with each entry for the entry after it.
// A position of one DirStream is good for every DirStream of the same
// directory.
type DirStream interface {
	// Next returns the next entry and the position after it (never 0),
	// or io.EOF after the last.
	Next(ctx context.Context) (TreeEntry, uint64, error)
	// Seek moves to position pos; one that is no position of the
	// directory fails with an error wrapping ErrBadPosition.
	Seek(ctx context.Context, pos uint64) error
	Close()
}

// ErrBadPosition is a listing position that is none of its directory's:
// the kernel passes on any offset a program gives seekdir(3).
var ErrBadPosition = errors.New("not a position of the directory's listing")

// TreeFile is an open regular file of an ArchiveTree.
type TreeFile interface {
	ReadAtContext(ctx context.Context, p []byte, off int64) (int, error)
	Close() error
}

// TreeEntry is one entry of an ArchiveTree, as a stat would show it.
type TreeEntry struct {
	// ID identifies the entry within its archive, stably (e.g. its
	// offset in the metadata stream). Hard links of one file have the
	// same ID, and so the same inode number in the mount.
	ID    uint64
	Name  string
	Mode  uint32 // st_mode: file type and permission bits
	UID   uint32
	GID   uint32
	Size  uint64
	Mtime time.Time
	Rdev  uint64
	Nlink uint32  // 0: 1
	Ref   TreeRef // the tree's own handle of the entry: one per looked-up entry is kept
}

// TreeRef is an ArchiveTree's handle of an entry, four words of its own
// choosing, kept inline in each looked-up node (no allocation, nothing
// for the garbage collector to follow). Only the root's may be zero.
type TreeRef [4]uint64

// Xattr is one extended attribute.
type Xattr struct {
	Name  string
	Value []byte
}

// indexStream is a Stream over one index file.
type indexStream struct {
	*chunkcache.Reader
	idx index.Index
}

func (s *indexStream) Close() error { return s.idx.Close() }

// streamOpener opens a snapshot's indexes as Streams.
func (f *mountFS) streamOpener(snap store.Snapshot, m *store.Manifest) StreamOpener {
	return func(ctx context.Context, file string) (Stream, error) {
		x, err := f.s.OpenSnapshotIndex(snap, m, file)
		if err != nil {
			return nil, err
		}
		return &indexStream{Reader: chunkcache.NewReader(f.bg, x, f.cache, f.readahead), idx: x}, nil
	}
}
