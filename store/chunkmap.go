package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// ErrChunkFault is returned (through RecoverFault) when a mapped chunk
// file could not be read: it shrank or its disk failed while mapped.
var ErrChunkFault = errors.New("chunk file changed or failed while mapped")

// LoadChunkMapped is LoadChunkInto without the copy for a chunk file the
// page cache holds whole: that file is mapped read-only and its pages are
// read in place. The blob is valid until release is called. Any other
// chunk is read into buf (O_DIRECT where allowed), as by LoadChunkInto,
// and release is nil.
//
// A mapping faults (SIGBUS) when its file is truncated under it, which
// cairn never does but a damaged disk or another program might; a caller
// that reads the blob must run with debug.SetPanicOnFault(true) and
// defer RecoverFault, which turns that fault into an error.
func (s *Store) LoadChunkMapped(ctx context.Context, d chunk.Digest, buf []byte) (blob []byte, release func(), err error) {
	return s.loadChunkMapped(ctx, d, buf, true)
}

// LoadChunkMappedCompressed is LoadChunkMapped for callers that keep
// plain data (the chunk cache): a plain blob would be copied out of its
// mapping anyway, and reading it costs less than mapping it, so only
// compressed blobs are mapped (a read of the 8-byte magic tells).
func (s *Store) LoadChunkMappedCompressed(ctx context.Context, d chunk.Digest, buf []byte) (blob []byte, release func(), err error) {
	return s.loadChunkMapped(ctx, d, buf, false)
}

func (s *Store) loadChunkMapped(ctx context.Context, d chunk.Digest, buf []byte, mapPlain bool) (blob []byte, release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	f, err := openChunkFile(s.ChunkPath(d))
	if err != nil {
		return nil, nil, chunkOpenError(d, err)
	}
	defer f.Close()
	size, err := chunkFileSize(d, f)
	if err != nil {
		return nil, nil, err
	}
	cached := size > 0 && pageCached(f, size)
	if cached && (mapPlain || !isPlain(f)) {
		m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err == nil {
			return m, func() { unix.Munmap(m) }, nil
		}
	}
	blob, err = readChunkSize(d, f, size, buf, !cached && setDirect(f))
	return blob, nil, err
}

// isPlain reports whether f holds an uncompressed, unencrypted blob.
func isPlain(f *os.File) bool {
	var magic [8]byte
	n, _ := unix.Pread(int(f.Fd()), magic[:], 0)
	return n == len(magic) && magic == chunk.MagicPlain
}

// RecoverFault, deferred by a goroutine that runs with
// debug.SetPanicOnFault(true), turns a memory fault (a mapped chunk file
// that shrank) into ErrChunkFault in *err; other panics go on.
func RecoverFault(d chunk.Digest, err *error) {
	p := recover()
	if p == nil {
		return
	}
	if re, ok := p.(runtime.Error); ok {
		if _, fault := re.(interface{ Addr() uintptr }); fault {
			*err = fmt.Errorf("chunk %s: %w: %v", d, ErrChunkFault, re)
			return
		}
	}
	panic(p)
}
