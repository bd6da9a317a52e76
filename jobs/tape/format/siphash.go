package format

import (
	"encoding/binary"
	"math/bits"
)

// pxar hashes goodbye-table file names with SipHash-2-4 under these keys
// (pxar src/format/mod.rs PXAR_HASH_KEY_1/2).
const (
	pxarHashKey1 = 0x83ac3f1cfbb450db
	pxarHashKey2 = 0xaa4f1b6879369fbd
)

// sipHash24 is SipHash-2-4 of msg under the key (k0, k1).
func sipHash24(k0, k1 uint64, msg []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13) ^ v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16) ^ v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21) ^ v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17) ^ v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	n := len(msg)
	for len(msg) >= 8 {
		m := binary.LittleEndian.Uint64(msg)
		v3 ^= m
		round()
		round()
		v0 ^= m
		msg = msg[8:]
	}
	last := uint64(n&0xff) << 56
	for i, c := range msg {
		last |= uint64(c) << (8 * i)
	}
	v3 ^= last
	round()
	round()
	v0 ^= last
	v2 ^= 0xff
	for range 4 {
		round()
	}
	return v0 ^ v1 ^ v2 ^ v3
}

func hashFilename(name string) uint64 {
	return sipHash24(pxarHashKey1, pxarHashKey2, []byte(name))
}
