package crypt

import (
	"crypto/cipher"
	"errors"
)

// KeySize is the length of an AES-256 key.
const KeySize = 32

// IVSize and TagSize are the GCM nonce (PBS uses 16 bytes) and tag sizes.
const (
	IVSize  = 16
	TagSize = 16
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrAuth: the GCM tag did not verify: wrong key, or the ciphertext,
	// IV or tag was changed. No plaintext is returned with it.
	ErrAuth = errors.New("decryption failed: wrong key or damaged data")
	// ErrKeySize: a key that is not KeySize bytes.
	ErrKeySize = errors.New("encryption key must be 32 bytes")
)

// Fingerprint identifies a key without revealing it: PBS's
// compute_digest(FINGERPRINT_INPUT). String prints it as PBS does.
type Fingerprint [32]byte

// Key is an encryption key with what PBS derives from it. The zero Key is
// not usable; make one with NewKey or GenerateKey.
type Key struct {
	mem    []byte      // enc ‖ id_key, in locked memory where the OS allows
	mapped bool        // mem was mapped by keyMemory
	enc    []byte      // mem[:32], the AES-256 key
	id     []byte      // mem[32:64], id_key (PBKDF2 of enc), for digests and auth tags
	fp     Fingerprint // compute_digest(FINGERPRINT_INPUT)
	aead   cipher.AEAD // AES-256-GCM with a 16-byte nonce; nil once wiped
}

// The functions and methods below are the package's contract; crypt.go
// implements them.
//
// NewKey(enc []byte) (*Key, error)          copies enc (ErrKeySize)
// GenerateKey() (*Key, error)               a random key (crypto/rand)
// (*Key).Export() []byte                    a copy of enc; the caller wipes it
// (*Key).Fingerprint() Fingerprint
// (*Key).Digest(data []byte) [32]byte       SHA-256(data ‖ id_key)
// (*Key).AuthTag(data []byte) [32]byte      HMAC-SHA256 as compute_auth_tag
// (*Key).Seal(dst, plain []byte) (out []byte, iv [IVSize]byte, tag [TagSize]byte, err error)
//                                            appends the ciphertext to dst
// (*Key).Open(dst, ciphertext []byte, iv [IVSize]byte, tag [TagSize]byte) ([]byte, error)
//                                            ErrAuth on a bad tag
// (*Key).Wipe()                             zeroes the key material
// (Fingerprint).String() string             as PBS prints fingerprints
