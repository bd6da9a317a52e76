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
	min, max  int
	mask, lim uint32
	// window holds the last 64 bytes of the chunk when a Scan call ends
	// without a cut: byte number n of the chunk sits at window[n&63].
	window [buzWindow]byte
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
func (c *Buzhash) Reset() { c.h, c.size = 0, 0 }

// Scan implements Chunker.
//
// Chunk byte number n (counted from the cut) is data[n-base] in this call,
// base being the size at entry; the byte leaving the window, number n-64,
// is data[pos-64] once pos >= 64 and in the saved window before that.
func (c *Buzhash) Scan(data []byte) int {
	base, h, pos := c.size, c.h, 0
	for ; pos < len(data) && base+pos < buzWindow; pos++ { // fill, no test
		h = bits.RotateLeft32(h, 1) ^ buzTable[data[pos]]
	}
	for ; pos < len(data) && pos < buzWindow; pos++ { // leaving byte in the window
		h = bits.RotateLeft32(h, 1) ^ buzTable[c.window[(base+pos)&(buzWindow-1)]] ^ buzTable[data[pos]]
		if size := base + pos + 1; size >= c.min && (size >= c.max || h&c.mask >= c.lim) {
			c.Reset()
			return pos + 1
		}
	}
	if pos < len(data) {
		var cut bool
		if pos, h, cut = c.roll(data, pos, base, h); cut {
			c.Reset()
			return pos
		}
	}
	c.save(data, base, h)
	return 0
}

// roll runs the hash over data[pos:] (pos >= 64) and returns the end of
// the chunk if it finds one.
func (c *Buzhash) roll(data []byte, pos, base int, h uint32) (int, uint32, bool) {
	// Below min nothing can cut: only roll.
	if end := min(len(data), c.min-base-1); pos < end {
		h = rollRange(h, data[pos:end], data[pos-buzWindow:end-buzWindow])
		pos = end
	}
	// From min up to max-1 the hash decides.
	if end := min(len(data), c.max-base-1); pos < end {
		n, hh, cut := rollTest(h, data[pos:end], data[pos-buzWindow:end-buzWindow], c.mask, c.lim)
		if cut {
			return pos + n, hh, true
		}
		h, pos = hh, end
	}
	// At max it always cuts.
	if pos < len(data) && base+pos+1 >= c.max {
		return pos + 1, h, true
	}
	return pos, h, false
}

// rollRange rolls h over the bytes in, with out the bytes leaving.
func rollRange(h uint32, in, out []byte) uint32 {
	t := &buzTable
	out = out[:len(in)]
	i := 0
	for ; i+4 <= len(in); i += 4 {
		o, b := out[i:i+4:i+4], in[i:i+4:i+4]
		x0 := t[o[0]] ^ t[b[0]]
		x1 := t[o[1]] ^ t[b[1]]
		x2 := t[o[2]] ^ t[b[2]]
		x3 := t[o[3]] ^ t[b[3]]
		h = bits.RotateLeft32(h, 4) ^ bits.RotateLeft32(x0, 3) ^ bits.RotateLeft32(x1, 2) ^ bits.RotateLeft32(x2, 1) ^ x3
	}
	for ; i < len(in); i++ {
		h = bits.RotateLeft32(h, 1) ^ (t[out[i]] ^ t[in[i]])
	}
	return h
}

// rollTest rolls h over in and stops after the first byte whose hash
// passes the boundary test, returning how many bytes it consumed.
func rollTest(h uint32, in, out []byte, mask, lim uint32) (int, uint32, bool) {
	t := &buzTable
	out = out[:len(in)]
	i := 0
	for ; i+4 <= len(in); i += 4 {
		o, b := out[i:i+4:i+4], in[i:i+4:i+4]
		h0 := bits.RotateLeft32(h, 1) ^ (t[o[0]] ^ t[b[0]])
		h1 := bits.RotateLeft32(h0, 1) ^ (t[o[1]] ^ t[b[1]])
		h2 := bits.RotateLeft32(h1, 1) ^ (t[o[2]] ^ t[b[2]])
		h3 := bits.RotateLeft32(h2, 1) ^ (t[o[3]] ^ t[b[3]])
		if (h0&mask >= lim) || (h1&mask >= lim) || (h2&mask >= lim) || (h3&mask >= lim) {
			break // find which byte below
		}
		h = h3
	}
	for ; i < len(in); i++ {
		h = bits.RotateLeft32(h, 1) ^ (t[out[i]] ^ t[in[i]])
		if h&mask >= lim {
			return i + 1, h, true
		}
	}
	return len(in), h, false
}

// save keeps the window and the hash for the next call.
func (c *Buzhash) save(data []byte, base int, h uint32) {
	from := max(0, len(data)-buzWindow)
	for p := from; p < len(data); p++ {
		c.window[(base+p)&(buzWindow-1)] = data[p]
	}
	c.h, c.size = h, base+len(data)
}
