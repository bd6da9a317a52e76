package chunk

import (
	"encoding/binary"
	"sync"
)

func isZero64(b []byte) bool {
	_ = b[63]
	v := binary.LittleEndian.Uint64(b[0:]) | binary.LittleEndian.Uint64(b[8:]) |
		binary.LittleEndian.Uint64(b[16:]) | binary.LittleEndian.Uint64(b[24:]) |
		binary.LittleEndian.Uint64(b[32:]) | binary.LittleEndian.Uint64(b[40:]) |
		binary.LittleEndian.Uint64(b[48:]) | binary.LittleEndian.Uint64(b[56:])
	return v == 0
}

var (
	zeroMu      sync.Mutex
	zeroDigests = map[int]Digest{}
)

// ZeroDigest returns the digest of size zero bytes, computed once per size.
func ZeroDigest(size int) Digest {
	zeroMu.Lock()
	defer zeroMu.Unlock()
	if d, ok := zeroDigests[size]; ok {
		return d
	}
	d := Sum(make([]byte, size))
	zeroDigests[size] = d
	return d
}
