package pxar

import "math/bits"

// HashFilename is the goodbye table hash of a file name: SipHash-2-4 of
// the name's bytes with the format's keys.
func HashFilename(name string) uint64 {
	return sipHash24(PXARHashKey1, PXARHashKey2, name)
}

// sipHash24 is SipHash-2-4 (Aumasson & Bernstein) of msg with key
// (k0, k1), as Rust's SipHasher24::new_with_keys(k0, k1) + write + finish.
func sipHash24(k0, k1 uint64, msg string) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573

	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13)
		v1 ^= v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16)
		v3 ^= v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21)
		v3 ^= v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17)
		v1 ^= v2
		v2 = bits.RotateLeft64(v2, 32)
	}

	n := len(msg)
	for len(msg) >= 8 {
		m := uint64(msg[0]) | uint64(msg[1])<<8 | uint64(msg[2])<<16 | uint64(msg[3])<<24 |
			uint64(msg[4])<<32 | uint64(msg[5])<<40 | uint64(msg[6])<<48 | uint64(msg[7])<<56
		v3 ^= m
		round()
		round()
		v0 ^= m
		msg = msg[8:]
	}
	last := uint64(n) << 56
	for i := 0; i < len(msg); i++ {
		last |= uint64(msg[i]) << (8 * i)
	}
	v3 ^= last
	round()
	round()
	v0 ^= last

	v2 ^= 0xff
	round()
	round()
	round()
	round()
	return v0 ^ v1 ^ v2 ^ v3
}
