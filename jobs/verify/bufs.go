package verify

import (
	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/directio"
)

// Memory a verify touches for the first time costs a page fault per
// 4 KiB (on a VM with free page reporting, about 30 µs each, after
// drop_caches as well). So the blobs read go into buffers that survive
// the GC (a sync.Pool empties at each cycle, and a verify of a few GiB
// runs many), and a worker's decode buffer is made once, for the largest
// chunk of the run, rather than grown chunk by chunk (each growth a new
// buffer and the old one garbage).

// blobBufs is a bounded free list of blob buffers: a worker puts back
// the blob it checked, a reader takes one for its next read. It holds
// at most as many as can be in flight (the readers', the queue's and the
// workers'), each at most a blob of the largest chunk. A new buffer has
// room for the largest blob of the run, so that it is not replaced by a
// larger one when a larger chunk comes (blobs of dynamic and compressed
// chunks have every size).
type blobBufs struct {
	free chan []byte
	size int // capacity of a new buffer
}

func newBlobBufs(n, size int) *blobBufs {
	return &blobBufs{free: make(chan []byte, n), size: min(size, maxBlobBuf)}
}

// get returns a free buffer, or a new one.
func (b *blobBufs) get() []byte {
	select {
	case buf := <-b.free:
		return buf
	default:
		return make([]byte, 0, b.size)
	}
}

// put keeps buf for a later read unless the list is full or buf is
// larger than any chunk's blob.
func (b *blobBufs) put(buf []byte) {
	if cap(buf) == 0 || cap(buf) > maxBlobBuf {
		return
	}
	select {
	case b.free <- buf:
	default:
	}
}

// blobCap is the capacity a blob of a chunk of n bytes needs at most,
// read with O_DIRECT: its header, rounded up to the alignment, and the
// alignment again for where the buffer starts.
func blobCap(n int) int {
	return int(directio.RoundUp(int64(n+chunk.EncryptedHeaderSize))) + 2*directio.Align
}

// maxBlobBuf bounds a kept blob buffer: the largest chunk, its blob
// header and O_DIRECT's alignment.
const maxBlobBuf = chunk.MaxChunkSize + 64<<10

// decodeCap is the capacity of a worker's decode buffer: the largest
// chunk the items name, within the chunk size limit (an index naming a
// larger one is wrong; the decoder grows the buffer for what a chunk
// really holds), and zstd's slack (it wants 16 bytes spare past a
// frame's content size).
func decodeCap(items []item) int {
	n := int64(0)
	for i := range items {
		n = max(n, items[i].size)
	}
	return int(min(n, chunk.MaxChunkSize)) + 64
}
