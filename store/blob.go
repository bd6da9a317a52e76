package store

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// ErrChunkFault is returned (by Blob.Do) when a mapped chunk file could
// not be read: it shrank or its disk failed while mapped.
var ErrChunkFault = errors.New("chunk file changed or failed while mapped")

// Blob is a chunk's raw DataBlob as ReadChunk returns it: in the
// caller's buffer or in memory of the backend's, or mapped from a chunk
// file. A mapping faults (SIGBUS) when its file is truncated under it,
// which cairn never does but a damaged disk or another program might:
// read a Blob, and whatever slices of it decoding returns, inside Do,
// which turns such a fault into ErrChunkFault. Release ends its life.
type Blob struct {
	d      chunk.Digest
	data   []byte
	mapped bool // data is a mapping: unmapped by Release
	inBuf  bool // data is ChunkOptions.Buf (or what replaced it)
}

// BlobOf is a Blob of bytes in memory, for backends that neither map
// nor read into the caller's buffer.
func BlobOf(d chunk.Digest, data []byte) Blob { return Blob{d: d, data: data} }

// BufBlob is a Blob read into the caller's buffer (ChunkOptions.Buf, or
// what replaced it when it was too small), for a Backend other than the
// local directory.
func BufBlob(d chunk.Digest, data []byte) Blob { return Blob{d: d, data: data, inBuf: true} }

// Bytes returns the blob. Read a mapped one inside Do only.
func (b Blob) Bytes() []byte { return b.data }

// InBuf reports whether the blob lies in ChunkOptions.Buf, or in the
// buffer that replaced it when it was too small.
func (b Blob) InBuf() bool { return b.inBuf }

// Mapped reports whether the blob is a mapping of its chunk file.
func (b Blob) Mapped() bool { return b.mapped }

// Do runs fn with the blob. A memory fault while fn reads the mapping
// (or slices of it, on this goroutine) is returned as ErrChunkFault;
// other panics go on.
func (b Blob) Do(fn func(blob []byte) error) (err error) {
	if !b.mapped {
		return fn(b.data)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverFault(b.d, &err)
	return fn(b.data)
}

// Release unmaps a mapped blob; slices of it are invalid afterwards.
// It does nothing to a blob in memory.
func (b *Blob) Release() {
	if b.mapped {
		unix.Munmap(b.data)
		*b = Blob{}
	}
}

// recoverFault, deferred where faults panic, turns a memory fault into
// ErrChunkFault in *err; other panics go on.
func recoverFault(d chunk.Digest, err *error) {
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
