package store

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/internal/fsutil"
	"golang.org/x/sys/unix"
)

// InsertChunkParts implements Backend: it writes to a temporary name in
// the chunk's prefix directory (made when missing) and renames, so
// concurrent inserts of one chunk, from goroutines or processes, are
// safe, and the header and payload with one writev.
func (l localDir) InsertChunkParts(_ context.Context, d chunk.Digest, header, payload []byte) (existed bool, err error) {
	path := l.chunkPath(d)
	size := int64(len(header) + len(payload))
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err == nil && st.Size == size {
		// kept and touched; gone since the stat (a GC removed it): written
		if err := touchPath(path); !errors.Is(err, fs.ErrNotExist) {
			return err == nil, err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), d.String()+".tmp_")
	if errors.Is(err, fs.ErrNotExist) {
		// a lazily created store, or a prefix directory someone removed
		if err = os.Mkdir(filepath.Dir(path), 0o750); err == nil || errors.Is(err, fs.ErrExist) {
			tmp, err = os.CreateTemp(filepath.Dir(path), d.String()+".tmp_")
		}
	}
	if err != nil {
		return false, fmt.Errorf("insert chunk %s: %w", d, err)
	}
	if err := writev(tmp, header, payload); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return false, fmt.Errorf("insert chunk %s: %w", d, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return false, fmt.Errorf("insert chunk %s: %w", d, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return false, fmt.Errorf("insert chunk %s: %w", d, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return false, fmt.Errorf("insert chunk %s: %w", d, err)
	}
	return false, nil
}

// ReadFile implements Backend (ReadFileBounded, whose errors name the
// file's whole path).
func (l localDir) ReadFile(_ context.Context, name string, limit int64) ([]byte, error) {
	return ReadFileBounded(filepath.Join(l.root, name), limit)
}

// OpenIndex implements Backend: the index file is mapped (index.Open of
// its whole path, whose errors name it); a missing one is ErrNotFound.
func (l localDir) OpenIndex(_ context.Context, name string) (index.Index, error) {
	x, err := index.Open(filepath.Join(l.root, name))
	if err != nil {
		return nil, notFound(err)
	}
	return x, nil
}

// HasChunk implements Backend: a stat of the chunk's file.
func (l localDir) HasChunk(_ context.Context, d chunk.Digest) (bool, error) {
	var st unix.Stat_t
	err := unix.Stat(l.chunkPath(d), &st)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("chunk %s: %w", d, err)
	}
	return st.Size > 0, nil
}

// TouchChunk implements Backend: it sets the chunk file's atime to now,
// leaving mtime.
func (l localDir) TouchChunk(_ context.Context, d chunk.Digest) error {
	return touchPath(l.chunkPath(d))
}

func touchPath(path string) error {
	if err := fsutil.TouchNoFollow(path); err != nil {
		return fmt.Errorf("touch %s: %w", path, notFound(err))
	}
	return nil
}

// WalkChunks implements Backend: prefix directory by prefix directory,
// in directory order. Names that are not 64-hex digests (temporary
// files, .bad files) are skipped.
func (l localDir) WalkChunks(ctx context.Context, fn func(chunk.Digest) error) error {
	for i := 0; i < prefixDir; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := fmt.Sprintf("%s/%s/%04x", l.root, chunkDir, i)
		names, err := fsutil.ReadNames(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not created yet (lazy store)
		}
		if err != nil {
			return fmt.Errorf("walk chunks: %w", err)
		}
		for _, n := range names {
			if len(n) != 2*chunk.DigestSize || strings.ContainsRune(n, '.') {
				continue
			}
			var d chunk.Digest
			if _, err := hex.Decode(d[:], []byte(n)); err != nil {
				continue
			}
			if err := fn(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// writev writes a and b to f with as few system calls as it can.
func writev(f *os.File, a, b []byte) error {
	iov := [][]byte{a, b}
	for len(iov) > 0 {
		n, err := unix.Writev(int(f.Fd()), iov)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err
		}
		for n > 0 && len(iov) > 0 {
			if n >= len(iov[0]) {
				n -= len(iov[0])
				iov = iov[1:]
			} else {
				iov[0] = iov[0][n:]
				n = 0
			}
		}
		for len(iov) > 0 && len(iov[0]) == 0 {
			iov = iov[1:]
		}
	}
	return nil
}
