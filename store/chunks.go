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
	"time"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// ChunkPath returns the path of a chunk file.
func (s *Store) ChunkPath(d chunk.Digest) string { return localDir{s.root}.chunkPath(d) }

// InsertChunk stores blob (an encoded DataBlob) as the chunk d. An
// existing chunk of the same size is kept and only touched (dedup); one of
// another size, or empty, is replaced. It writes to a temporary name and
// renames, so concurrent inserts of one chunk, from goroutines or
// processes, are safe. existed tells whether the chunk was already there.
func (s *Store) InsertChunk(d chunk.Digest, blob []byte) (existed bool, err error) {
	return s.InsertChunkParts(d, blob, nil)
}

// InsertChunkParts is InsertChunk for a blob given as header and payload
// (chunk.EncodeBlobParts), written with one writev and no copy.
func (s *Store) InsertChunkParts(d chunk.Digest, header, payload []byte) (existed bool, err error) {
	path := s.ChunkPath(d)
	size := int64(len(header) + len(payload))
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err == nil {
		if st.Size == size {
			return true, s.touchPath(path)
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

// HasChunk reports whether chunk d exists with a non-zero size.
func (s *Store) HasChunk(d chunk.Digest) bool {
	var st unix.Stat_t
	return unix.Stat(s.ChunkPath(d), &st) == nil && st.Size > 0
}

// ChunkInfo is what a stat of a chunk file tells.
type ChunkInfo struct {
	Inode uint64
	Dev   uint64
	Size  int64
	Atime time.Time
}

// StatChunk stats chunk d.
func (s *Store) StatChunk(d chunk.Digest) (ChunkInfo, error) {
	var st unix.Stat_t
	if err := unix.Stat(s.ChunkPath(d), &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return ChunkInfo{}, fmt.Errorf("chunk %s: %w: %w", d, ErrMissingChunk, fs.ErrNotExist)
		}
		return ChunkInfo{}, fmt.Errorf("stat chunk %s: %w", d, err)
	}
	return ChunkInfo{Inode: st.Ino, Dev: uint64(st.Dev), Size: st.Size,
		Atime: time.Unix(st.Atim.Sec, st.Atim.Nsec)}, nil
}

// TouchChunk sets the chunk's atime to now (GC's mark), leaving mtime.
func (s *Store) TouchChunk(d chunk.Digest) error {
	return s.touchPath(s.ChunkPath(d))
}

func (s *Store) touchPath(path string) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_OMIT}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, 0); err != nil {
		return fmt.Errorf("touch %s: %w", path, notFound(err))
	}
	return nil
}

// MarkBad renames chunk d to <digest>.N.bad with the first free N in 0..9
// (the tenth reuses 9) and returns the new path, so a later backup can
// write a good copy again.
func (s *Store) MarkBad(d chunk.Digest) (string, error) {
	path := s.ChunkPath(d)
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

// WalkChunks calls fn for every chunk in the store, prefix directory by
// prefix directory, in directory order. Names that are not 64-hex digests
// (temporary files, .bad files) are skipped.
func (s *Store) WalkChunks(ctx context.Context, fn func(chunk.Digest) error) error {
	for i := 0; i < prefixDir; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := fmt.Sprintf("%s/%s/%04x", s.root, chunkDir, i)
		names, err := readNames(dir)
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

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
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
