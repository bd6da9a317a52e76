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
	"unsafe"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

var jobKindRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// LockJob takes the store's lock for one kind of job (verify, gc, …),
// <store>/.job-<kind>.lck, so that one job of a kind runs at a time on a
// store across processes. It waits up to the store's lock wait, then
// fails with ErrLocked.
func (s *Store) LockJob(kind string) (*Lock, error) {
	if !jobKindRE.MatchString(kind) {
		return nil, fmt.Errorf("job kind %q: %w", kind, ErrBadName)
	}
	return s.flock(context.Background(), filepath.Join(s.root, ".job-"+kind+".lck"), true, s.lockWait)
}

// DirectAlign is the alignment O_DIRECT needs of buffers, offsets and
// lengths (the largest logical block size in use).
const DirectAlign = 4096

// ReadChunkFile reads chunk d's raw DataBlob into buf (grown when too
// small) and returns it. A missing chunk is ErrMissingChunk; a file larger
// than a blob may be is ErrCorruptChunk.
//
// With direct, it reads with O_DIRECT where the file system allows: what
// is on the disk is read (not a cached copy), without the copy through
// the page cache and without evicting what readers of the mount keep
// there. Otherwise (or where O_DIRECT is refused) it reads through the
// page cache and, with direct, drops the file's pages afterwards.
func (s *Store) ReadChunkFile(ctx context.Context, d chunk.Digest, buf []byte, direct bool) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return buf[:0], err
	}
	path := s.ChunkPath(d)
	if direct {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err == nil {
			f := os.NewFile(uintptr(fd), path)
			defer f.Close()
			return readChunk(d, f, buf, true)
		}
		if !errors.Is(err, unix.EINVAL) {
			return buf[:0], chunkOpenError(d, &fs.PathError{Op: "open", Path: path, Err: err})
		}
	}
	f, err := openChunkFile(path)
	if err != nil {
		return buf[:0], chunkOpenError(d, err)
	}
	defer f.Close()
	b, err := readChunk(d, f, buf, false)
	if direct && err == nil {
		unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	}
	return b, err
}

// openChunkFile opens a chunk file for reading. O_NONBLOCK keeps a FIFO
// in a hostile store from blocking the open until a writer comes (it
// changes nothing for a regular file); chunkFileSize then refuses
// whatever is not a regular file, as OpenRegular does.
func openChunkFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
}

func chunkOpenError(d chunk.Digest, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("chunk %s: %w: %w", d, ErrMissingChunk, err)
	}
	return fmt.Errorf("chunk %s: %w", d, err)
}

// readChunk reads the whole file f. For O_DIRECT the buffer is aligned
// and the length rounded up; the file's end gives a short read.
func readChunk(d chunk.Digest, f *os.File, buf []byte, direct bool) ([]byte, error) {
	size, err := chunkFileSize(d, f)
	if err != nil {
		return buf[:0], err
	}
	return readChunkSize(d, f, size, buf, direct)
}

// chunkFileSize returns the size of chunk file f, which must be a
// regular file (not a FIFO, device or directory) and fit a blob.
func chunkFileSize(d chunk.Digest, f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("chunk %s: %w", d, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("chunk %s: %w: %s is not a regular file (%s)", d, ErrCorruptChunk, f.Name(), fi.Mode().Type())
	}
	if size := fi.Size(); size > chunk.MaxBlobSize {
		return 0, fmt.Errorf("chunk %s: %w: file is %d bytes, more than a blob may be", d, ErrCorruptChunk, size)
	}
	return fi.Size(), nil
}

// readChunkSize is readChunk of a file known to hold size bytes.
func readChunkSize(d chunk.Digest, f *os.File, size int64, buf []byte, direct bool) ([]byte, error) {
	want := size
	if direct {
		want = (size + DirectAlign - 1) &^ (DirectAlign - 1)
	}
	// Aligned either way, so that one buffer serves buffered and direct
	// reads alike.
	data := AlignedBuf(&buf, int(want))
	n, err := preadFull(f, data, size)
	if err != nil {
		return buf[:0], fmt.Errorf("chunk %s: read %d of %d bytes: %w", d, n, size, err)
	}
	return data[:size], nil
}

// AlignedBuf returns n bytes of *buf that start at an address O_DIRECT
// accepts, replacing *buf with a larger buffer when it is too small.
func AlignedBuf(buf *[]byte, n int) []byte {
	off := alignOff(*buf)
	if cap(*buf)-off < n {
		*buf = make([]byte, n+DirectAlign)
		off = alignOff(*buf)
	}
	return (*buf)[:cap(*buf)][off : off+n]
}

// IsAligned reports whether b starts at an address O_DIRECT accepts.
func IsAligned(b []byte) bool { return alignOff(b) == 0 }

// alignOff is how far into buf an O_DIRECT buffer may start.
func alignOff(buf []byte) int {
	if cap(buf) == 0 {
		return 0
	}
	if mis := int(uintptr(unsafe.Pointer(&buf[:1][0])) % DirectAlign); mis != 0 {
		return DirectAlign - mis
	}
	return 0
}

// preadFull reads size bytes from offset 0 into data (which may be longer,
// as O_DIRECT wants), never asking past the point a read stopped short.
func preadFull(f *os.File, data []byte, size int64) (int64, error) {
	fd := int(f.Fd())
	var n int64
	for n < size {
		m, err := unix.Pread(fd, data[n:], n)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.ErrUnexpectedEOF // the file shrank
		}
		n += int64(m)
	}
	return n, nil
}
