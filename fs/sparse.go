package fs

import (
	"math/bits"
	"syscall"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Holes of an image. An all-zero chunk of a fixed index is named by the
// digest of zeros of its size (chunk.ZeroDigest; in an encrypted
// archive the keyed digest of zeros), so the index alone tells where an
// image's holes are: the mount answers SEEK_DATA and SEEK_HOLE from it
// and reports as st_blocks only the chunks that hold data, so that
// cp --sparse=auto, tar -S, rsync -S and qemu-img convert copy an image
// out sparse, as `cairn restore` writes it. The holeMap is one bit per
// chunk (1/256 of the index), made once per node from its index, at the
// first stat (LOOKUP, GETATTR) or lseek; the snapshot index keeps the
// image's bytes of data for later mounts' stat (store.ListedArchive).

// holeMap says which chunks of a fixed index are zero chunks.
type holeMap struct {
	size, chunkSize int64
	zero            []uint64 // bit i: chunk i is all zeros
	data            int64    // bytes in chunks that are not
}

const (
	seekData = 3 // SEEK_DATA
	seekHole = 4 // SEEK_HOLE
)

// newHoleMap reads x's entries once. Its chunks are equal-sized but the
// last; a chunk is a hole when its digest is that of zeros of its size.
func newHoleMap(x index.Index) (*holeMap, error) {
	n := x.Len()
	h := &holeMap{size: x.Size(), zero: make([]uint64, (n+63)/64)}
	if n == 0 {
		return h, nil
	}
	_, start, end := x.Chunk(0)
	h.chunkSize = end - start
	key := chunkcache.IndexKey(x)
	zeros := map[int64][2]chunk.Digest{}
	for i := range n {
		d, start, end := x.Chunk(i)
		sz := end - start
		z, ok := zeros[sz]
		if !ok {
			z[0], z[1] = chunk.ZeroDigest(int(sz)), chunk.ZeroDigest(int(sz))
			if key != nil { // a signed-only archive has a key and plain chunks
				z[1] = key.Digest(make([]byte, sz))
			}
			zeros[sz] = z
		}
		if d == z[0] || d == z[1] {
			h.zero[i/64] |= 1 << (i % 64)
		} else {
			h.data += sz
		}
	}
	if err := x.Err(); err != nil {
		return nil, err
	}
	return h, nil
}

// blocks is st_blocks: the 512-byte blocks of the chunks with data.
func (h *holeMap) blocks() uint64 { return uint64(h.data+511) / 512 }

// next returns the first chunk from i on that is a hole (hole) or holds
// data (!hole); Len when there is none.
func (h *holeMap) next(i int, hole bool) int {
	n := int((h.size + h.chunkSize - 1) / h.chunkSize)
	for i < n {
		w := h.zero[i/64]
		if !hole {
			w = ^w
		}
		w >>= i % 64
		if w != 0 {
			return min(i+bits.TrailingZeros64(w), n)
		}
		i = (i/64 + 1) * 64
	}
	return n
}

// seek answers lseek's SEEK_DATA and SEEK_HOLE at off: the next offset
// of data, or of a hole (the end of the file counts as one); ENXIO at or
// past the end, or when no data follows.
func (h *holeMap) seek(off uint64, whence uint32) (uint64, syscall.Errno) {
	if whence != seekData && whence != seekHole {
		return 0, syscall.EINVAL
	}
	if off >= uint64(h.size) {
		return 0, syscall.ENXIO
	}
	i := h.next(int(off/uint64(h.chunkSize)), whence == seekHole)
	at := int64(i) * h.chunkSize
	if at >= h.size {
		if whence == seekData {
			return 0, syscall.ENXIO
		}
		return uint64(h.size), 0
	}
	return max(off, uint64(at)), 0
}

// holes returns the image's hole map, made at the first call; nil (no
// holes known: all data) for a blob or an index of variable chunks.
func (n *archiveFile) holes() (*holeMap, error) {
	if n.arch.Blob {
		return nil, nil
	}
	if h := n.holeMap.Load(); h != nil {
		return h, nil
	}
	n.holeMu.Lock()
	defer n.holeMu.Unlock()
	if h := n.holeMap.Load(); h != nil {
		return h, nil
	}
	m, a, err := n.arch.Man.Archive(n.arch.Name)
	if err != nil {
		return nil, err
	}
	if fixed, _ := index.Kind(a.Files[0]); !fixed {
		return nil, nil
	}
	x, err := n.fsys.s.OpenSnapshotIndex(n.arch.Snapshot(), m, a.Files[0])
	if err != nil {
		return nil, err
	}
	defer x.Close()
	h, err := newHoleMap(x)
	if err != nil {
		return nil, err
	}
	n.holeMap.Store(h)
	n.arch.LearnedData(uint64(h.data))
	return h, nil
}

// getattr gives an image's st_blocks from its hole map, or from the
// snapshot index once a mount learned it (the snapshot is then stat'ed
// without reading its manifest or index). A map that cannot be made (a
// damaged snapshot, whose reads fail anyway) leaves the listing's
// attributes: the size, as if all data.
func (n *archiveFile) getattr(c *call, out *fuse.AttrOut) syscall.Errno {
	out.Attr = n.attr
	if n.blocksKnown {
		return 0
	}
	if h, err := n.holes(); err == nil && h != nil {
		out.Blocks = h.blocks()
	} else if err != nil {
		n.fsys.log.Debug("holes of an image unknown", "snapshot", n.arch.Snapshot().String(), "archive", n.arch.Name, "err", err)
	}
	return 0
}

// lseek answers SEEK_DATA and SEEK_HOLE (the kernel sends LSEEK for no
// other whence) from the hole map; a blob is all data.
func (n *archiveFile) lseek(c *call, off uint64, whence uint32) (uint64, syscall.Errno) {
	h, err := n.holes()
	if err != nil {
		return 0, n.openFailed(err)
	}
	if h == nil {
		h = &holeMap{size: int64(n.attr.Size), chunkSize: max(int64(n.attr.Size), 1), zero: []uint64{0}}
	}
	return h.seek(off, whence)
}
