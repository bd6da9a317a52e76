package directio

import "unsafe"

// Align is the alignment O_DIRECT needs of buffers, offsets and lengths
// (the largest logical block size in use).
const Align = 4096

// RoundUp returns n rounded up to a multiple of Align.
func RoundUp(n int64) int64 { return (n + Align - 1) &^ (Align - 1) }

// Buf returns n bytes of *buf that start at an address O_DIRECT accepts,
// replacing *buf with a larger buffer when it is too small, so that one
// buffer serves many reads or writes.
func Buf(buf *[]byte, n int) []byte {
	off := alignOff(*buf)
	if cap(*buf)-off < n {
		*buf = make([]byte, n+Align)
		off = alignOff(*buf)
	}
	return (*buf)[:cap(*buf)][off : off+n]
}

// Aligned reports whether b starts at an address O_DIRECT accepts.
func Aligned(b []byte) bool { return alignOff(b) == 0 }

// alignOff is how far into buf an O_DIRECT buffer may start.
func alignOff(buf []byte) int {
	if cap(buf) == 0 {
		return 0
	}
	if mis := int(uintptr(unsafe.Pointer(&buf[:1][0])) % Align); mis != 0 {
		return Align - mis
	}
	return 0
}
