package chunk

import "math/bits"

const buzWindow = 64

// Buzhash is the content-defined chunker of Proxmox Backup Server: a
// 64-byte rolling buzhash that cuts when (h & mask) >= mask-2 with
// mask = 2·avg−1, never below avg/4 and always at 4·avg. After a cut the
// hash, the window and the size start again from zero, so cut points
// depend only on the bytes since the previous cut.
type Buzhash struct {
	h         uint32
	size      int // bytes in the current chunk
	fill      int // bytes in the window, up to buzWindow
	min, max  int
	mask, lim uint32
	window    [buzWindow]byte
}

var _ Chunker = (*Buzhash)(nil)

// NewBuzhash returns a buzhash chunker with the given average chunk size,
// a power of two (see CheckChunkSize).
func NewBuzhash(avg int) (*Buzhash, error) {
	if err := CheckChunkSize(avg); err != nil {
		return nil, err
	}
	return newBuzhash(avg), nil
}

func newBuzhash(avg int) *Buzhash {
	mask := uint32(2*avg - 1)
	return &Buzhash{min: avg / 4, max: avg * 4, mask: mask, lim: mask - 2}
}

// Reset implements Chunker.
func (c *Buzhash) Reset() { c.h, c.size, c.fill = 0, 0, 0 }

// Scan implements Chunker.
func (c *Buzhash) Scan(data []byte) int {
	pos := 0
	if c.fill < buzWindow {
		n := min(buzWindow-c.fill, len(data))
		h := c.h
		for _, b := range data[:n] {
			c.window[c.fill] = b
			c.fill++
			h = bits.RotateLeft32(h, 1) ^ buzTable[b]
		}
		c.h = h
		c.size += n
		pos = n
		if c.fill < buzWindow {
			return 0
		}
	}
	// Nothing can cut before min: roll without testing up to there.
	h, size := c.h, c.size
	win := &c.window
	for pos < len(data) {
		b := data[pos]
		idx := size & (buzWindow - 1)
		h = bits.RotateLeft32(h, 1) ^ buzTable[win[idx]] ^ buzTable[b]
		win[idx] = b
		size++
		pos++
		if size >= c.min && (size >= c.max || h&c.mask >= c.lim) {
			c.Reset()
			return pos
		}
	}
	c.h, c.size = h, size
	return 0
}
