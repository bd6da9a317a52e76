package pxar

import "math/bits"

// HashFilename is the goodbye table hash of a file name: SipHash-2-4 of
// the name's bytes with the format's keys.
func HashFilename(name string) uint64 {
	return sipHash24(PXARHashKey1, PXARHashKey2, name)
}

// sipState is SipHash-2-4's state (Aumasson & Bernstein).
type sipState struct{ v0, v1, v2, v3 uint64 }

func newSip(k0, k1 uint64) sipState {
	return sipState{k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d, k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573}
}

func (s *sipState) round() {
	s.v0 += s.v1
	s.v1 = bits.RotateLeft64(s.v1, 13)
	s.v1 ^= s.v0
	s.v0 = bits.RotateLeft64(s.v0, 32)
	s.v2 += s.v3
	s.v3 = bits.RotateLeft64(s.v3, 16)
	s.v3 ^= s.v2
	s.v0 += s.v3
	s.v3 = bits.RotateLeft64(s.v3, 21)
	s.v3 ^= s.v0
	s.v2 += s.v1
	s.v1 = bits.RotateLeft64(s.v1, 17)
	s.v1 ^= s.v2
	s.v2 = bits.RotateLeft64(s.v2, 32)
}

// block compresses one 8-byte message word.
func (s *sipState) block(m uint64) {
	s.v3 ^= m
	s.round()
	s.round()
	s.v0 ^= m
}

func (s *sipState) finish() uint64 {
	s.v2 ^= 0xff
	s.round()
	s.round()
	s.round()
	s.round()
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3
}

// sipHash24 is SipHash-2-4 of msg with key (k0, k1), as Rust's
// SipHasher24::new_with_keys(k0, k1) + write + finish.
func sipHash24(k0, k1 uint64, msg string) uint64 {
	s := newSip(k0, k1)
	n := len(msg)
	for len(msg) >= 8 {
		s.block(uint64(msg[0]) | uint64(msg[1])<<8 | uint64(msg[2])<<16 | uint64(msg[3])<<24 |
			uint64(msg[4])<<32 | uint64(msg[5])<<40 | uint64(msg[6])<<48 | uint64(msg[7])<<56)
		msg = msg[8:]
	}
	last := uint64(n) << 56
	for i := 0; i < len(msg); i++ {
		last |= uint64(msg[i]) << (8 * i)
	}
	s.block(last)
	return s.finish()
}

// sipHashWords is SipHash-2-4 of the 16 bytes of a and b (little-endian)
// with key (k0, k1).
func sipHashWords(k0, k1, a, b uint64) uint64 {
	s := newSip(k0, k1)
	s.block(a)
	s.block(b)
	s.block(16 << 56)
	return s.finish()
}
