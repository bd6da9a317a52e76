package pbscheck

import (
	"encoding/binary"
	"math/bits"
)

// pxar's goodbye-table key (src/format/mod.rs: the first 16 bytes of
// SHA-1("PROXMOX ARCHIVE FORMAT") as two u64).
const (
	hashKey1 = 0x83ac3f1cfbb450db
	hashKey2 = 0xaa4f1b6879369fbd
)

// hashName is pxar's hash_filename: SipHash-2-4 of the name with the
// keys above.
func hashName(name []byte) uint64 { return sipHash24(hashKey1, hashKey2, name) }

// sipHash24 is SipHash-2-4 (Aumasson, Bernstein) with key k0, k1.
func sipHash24(k0, k1 uint64, m []byte) uint64 {
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
	n := len(m)
	for len(m) >= 8 {
		w := binary.LittleEndian.Uint64(m)
		v3 ^= w
		round()
		round()
		v0 ^= w
		m = m[8:]
	}
	last := uint64(n) << 56
	for i, c := range m {
		last |= uint64(c) << (8 * i)
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
