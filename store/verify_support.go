package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

var jobKindRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// LockJob takes the store's lock for one kind of job (verify, gc, …),
// <store>/.job-<kind>.lck, so that one job of a kind runs at a time on a
// store across processes. It fails at once with ErrLocked.
func (s *Store) LockJob(kind string) (*Lock, error) {
	if !jobKindRE.MatchString(kind) {
		return nil, fmt.Errorf("job kind %q: %w", kind, ErrBadName)
	}
	return flock(context.Background(), filepath.Join(s.root, ".job-"+kind+".lck"), true, false)
}

// ReadChunkFile reads chunk d's raw DataBlob into buf (grown when too
// small) and returns it. A missing chunk is ErrMissingChunk; a file larger
// than a blob may be is ErrCorruptChunk. With dropCache the file's pages
// are dropped from the page cache afterwards, so that a scan of the whole
// store does not evict what readers of the mount keep there.
func (s *Store) ReadChunkFile(ctx context.Context, d chunk.Digest, buf []byte, dropCache bool) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return buf[:0], err
	}
	f, err := os.Open(s.ChunkPath(d))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return buf[:0], fmt.Errorf("chunk %s: %w: %w", d, ErrMissingChunk, err)
		}
		return buf[:0], fmt.Errorf("chunk %s: %w", d, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return buf[:0], fmt.Errorf("chunk %s: %w", d, err)
	}
	size := fi.Size()
	if size > chunk.MaxBlobSize {
		return buf[:0], fmt.Errorf("chunk %s: %w: file is %d bytes, more than a blob may be", d, ErrCorruptChunk, size)
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	n, err := io.ReadFull(f, buf)
	if err != nil {
		return buf[:n], fmt.Errorf("chunk %s: read %d of %d bytes: %w", d, n, size, err)
	}
	if dropCache {
		unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	}
	return buf, nil
}
