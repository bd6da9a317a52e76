package chunk

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// DigestSize is the length of a chunk digest in bytes.
const DigestSize = sha256.Size

// Digest is the SHA-256 of a chunk's plain data; it names the chunk.
type Digest [DigestSize]byte

// Sum returns the digest of data.
func Sum(data []byte) Digest { return sha256.Sum256(data) }

// String returns the lower-case hex form used in chunk file names.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// ParseDigest parses a 64-character hex digest.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if len(s) != 2*DigestSize {
		return d, fmt.Errorf("digest %q: want %d hex characters, have %d", s, 2*DigestSize, len(s))
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return d, fmt.Errorf("digest %q: %w", s, err)
	}
	return d, nil
}

// IsZero reports whether every byte of b is zero. It compares eight bytes
// at a time and is fast enough to run over every block of an image.
func IsZero(b []byte) bool {
	for len(b) >= 64 {
		if !isZero64(b[:64]) {
			return false
		}
		b = b[64:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
