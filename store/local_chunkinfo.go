package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// What verify and tape ask of a chunk beyond reading it, in a local
// store: a stat of its file and, for a corrupt one, a rename aside.

// chunkFiles is the optional side of a Backend whose chunks are files on
// a local disk, which callers may order reads by, stat cheaply and ask
// the kernel to read ahead: the local directory.
type chunkFiles interface {
	// chunkDir is the directory the chunk files are in (.chunks).
	chunkDir() string
	// chunkPath is chunk d's file.
	chunkPath(d chunk.Digest) string
}

var _ chunkFiles = localDir{}

func (l localDir) chunkDir() string { return filepath.Join(l.root, chunkDir) }

// StatChunk implements Backend: a stat of the chunk's file.
func (l localDir) StatChunk(_ context.Context, d chunk.Digest) (ChunkInfo, error) {
	var st unix.Stat_t
	if err := unix.Stat(l.chunkPath(d), &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return ChunkInfo{}, fmt.Errorf("chunk %s: %w: %w", d, ErrMissingChunk, fs.ErrNotExist)
		}
		return ChunkInfo{}, fmt.Errorf("stat chunk %s: %w", d, err)
	}
	return ChunkInfo{Inode: st.Ino, Dev: uint64(st.Dev), Size: st.Size,
		Atime: time.Unix(st.Atim.Sec, st.Atim.Nsec)}, nil
}

// MarkBad implements Backend: the file is renamed to <digest>.N.bad with
// the first free N in 0..9 (the tenth reuses 9).
func (l localDir) MarkBad(_ context.Context, d chunk.Digest) (string, error) {
	path := l.chunkPath(d)
	for n := 0; n < 10; n++ {
		bad := fmt.Sprintf("%s.%d.bad", path, n)
		if _, err := os.Lstat(bad); err == nil && n < 9 {
			continue
		}
		if err := os.Rename(path, bad); err != nil {
			return "", fmt.Errorf("mark chunk %s bad: %w", d, notFound(err))
		}
		return bad, nil
	}
	return "", fmt.Errorf("mark chunk %s bad: unreachable", d)
}
