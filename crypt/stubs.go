package crypt

import "errors"

var errTODO = errors.New("crypt: not implemented yet")

// NewKey copies enc into a new Key.
func NewKey(enc []byte) (*Key, error) { return nil, errTODO }

// GenerateKey makes a random key.
func GenerateKey() (*Key, error) { return nil, errTODO }

// Export returns a copy of the AES key; the caller wipes it.
func (k *Key) Export() []byte { return nil }

// Fingerprint returns the key's fingerprint.
func (k *Key) Fingerprint() Fingerprint { return k.fp }

// Digest is the keyed chunk digest SHA-256(data ‖ id_key).
func (k *Key) Digest(data []byte) [32]byte { return [32]byte{} }

// AuthTag is PBS's compute_auth_tag (HMAC-SHA256).
func (k *Key) AuthTag(data []byte) [32]byte { return [32]byte{} }

// Seal encrypts plain with a random IV, appending the ciphertext to dst.
func (k *Key) Seal(dst, plain []byte) (out []byte, iv [IVSize]byte, tag [TagSize]byte, err error) {
	return dst, iv, tag, errTODO
}

// Open decrypts ciphertext, appending the plaintext to dst; ErrAuth when
// the tag does not verify.
func (k *Key) Open(dst, ciphertext []byte, iv [IVSize]byte, tag [TagSize]byte) ([]byte, error) {
	return dst, errTODO
}

// Wipe zeroes the key material.
func (k *Key) Wipe() {}

// String prints the fingerprint as PBS does.
func (f Fingerprint) String() string { return "" }
