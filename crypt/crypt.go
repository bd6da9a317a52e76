package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNoKey: a nil or wiped Key was used.
var ErrNoKey = errors.New("encryption key is missing or was wiped")

// ErrFingerprint: a fingerprint string that is not 32 hex bytes.
var ErrFingerprint = errors.New("malformed key fingerprint")

// fingerprintInput is PBS's FINGERPRINT_INPUT,
// SHA-256("Proxmox Backup Encryption Key Fingerprint") (crypt_config.rs).
var fingerprintInput = [32]byte{
	110, 208, 239, 119, 71, 31, 255, 77, 85, 199, 168, 254, 74, 157, 182, 33, 97, 64, 127, 19, 76,
	114, 93, 223, 48, 153, 45, 37, 236, 69, 237, 38,
}

// idKeySalt and idKeyIter are PBS's id_key derivation:
// pbkdf2_hmac(enc_key, "_id_key", 10, sha256) -> 32 bytes.
const (
	idKeySalt = "_id_key"
	idKeyIter = 10
)

// NewKey copies enc into a new Key and derives its id_key and
// fingerprint. The caller still owns (and wipes) enc.
func NewKey(enc []byte) (*Key, error) {
	if len(enc) != KeySize {
		return nil, fmt.Errorf("%w: have %d", ErrKeySize, len(enc))
	}
	k := &Key{}
	k.mem, k.mapped = keyMemory(2 * KeySize)
	k.enc, k.id = k.mem[:KeySize:KeySize], k.mem[KeySize:2*KeySize:2*KeySize]
	copy(k.enc, enc)
	// pbkdf2.Key takes the password as a string: that copy of the key is
	// garbage the moment Key returns, but cannot be wiped.
	id, err := pbkdf2.Key(sha256.New, string(k.enc), []byte(idKeySalt), idKeyIter, len(k.id))
	if err != nil {
		k.Wipe()
		return nil, fmt.Errorf("deriving id_key: %w", err)
	}
	copy(k.id, id)
	wipe(id)
	block, err := aes.NewCipher(k.enc)
	if err != nil {
		k.Wipe()
		return nil, fmt.Errorf("AES key: %w", err)
	}
	k.aead, err = cipher.NewGCMWithNonceSize(block, IVSize)
	if err != nil {
		k.Wipe()
		return nil, fmt.Errorf("AES-GCM: %w", err)
	}
	k.fp = Fingerprint(k.Digest(fingerprintInput[:]))
	if k.fp == (Fingerprint{}) {
		k.Wipe()
		return nil, errors.New("deriving the key fingerprint failed")
	}
	return k, nil
}

// GenerateKey makes a random key (crypto/rand), as PBS's key create does.
func GenerateKey() (*Key, error) {
	var enc [KeySize]byte
	defer wipe(enc[:])
	if _, err := rand.Read(enc[:]); err != nil {
		return nil, fmt.Errorf("random key: %w", err)
	}
	return NewKey(enc[:])
}

// Export returns a copy of the AES key (to write a key file); the caller
// wipes it. A wiped or nil Key exports nil.
func (k *Key) Export() []byte {
	if !k.usable() {
		return nil
	}
	return append([]byte(nil), k.enc...)
}

func (k *Key) usable() bool { return k != nil && k.aead != nil }

// Fingerprint returns the key's fingerprint (zero for a nil Key).
func (k *Key) Fingerprint() Fingerprint {
	if k == nil {
		return Fingerprint{}
	}
	return k.fp
}

// Digest is the keyed chunk digest SHA-256(data ‖ id_key), PBS's
// compute_digest (id_key last, against length extension). A nil or
// wiped Key gives the zero array, which matches no chunk.
func (k *Key) Digest(data []byte) [32]byte {
	if !k.usable() {
		return [32]byte{}
	}
	h := sha256.New()
	h.Write(data)
	h.Write(k.id)
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// AuthTag is PBS's compute_auth_tag: HMAC-SHA256 keyed with id_key. A
// nil or wiped Key gives the zero array.
func (k *Key) AuthTag(data []byte) [32]byte {
	if !k.usable() {
		return [32]byte{}
	}
	m := hmac.New(sha256.New, k.id)
	m.Write(data)
	var t [32]byte
	m.Sum(t[:0])
	return t
}

// Seal encrypts plain with AES-256-GCM under a random 16-byte IV and empty
// associated data, appending the ciphertext (as long as plain) to dst. It
// may encrypt in place: plain may be exactly dst[len(dst):len(dst)+n].
func (k *Key) Seal(dst, plain []byte) (out []byte, iv [IVSize]byte, tag [TagSize]byte, err error) {
	if !k.usable() {
		return dst, iv, tag, ErrNoKey
	}
	if _, err := rand.Read(iv[:]); err != nil {
		return dst, iv, tag, fmt.Errorf("random IV: %w", err)
	}
	out = k.aead.Seal(dst, iv[:], plain, nil)
	n := len(out) - TagSize
	copy(tag[:], out[n:])
	clear(out[n:])
	return out[:n], iv, tag, nil
}

// Open decrypts ciphertext and verifies the tag, appending the plaintext
// to dst. When the tag does not verify it returns dst unchanged and an
// error matching ErrAuth; no plaintext is left in dst's spare capacity.
func (k *Key) Open(dst, ciphertext []byte, iv [IVSize]byte, tag [TagSize]byte) ([]byte, error) {
	if !k.usable() {
		return dst, ErrNoKey
	}
	// GCM wants ciphertext‖tag: build it where the plaintext goes and
	// decrypt in place (Go's GCM zeroes the output on a bad tag).
	n := len(dst)
	buf := append(dst, ciphertext...)
	buf = append(buf, tag[:]...)
	out, err := k.aead.Open(buf[n:n], iv[:], buf[n:], nil)
	if err != nil {
		clear(buf[n:])
		return dst, ErrAuth
	}
	return buf[:n+len(out)], nil
}

// Wipe zeroes the key material and makes the Key unusable. Seal, Open,
// Digest and AuthTag are safe for concurrent use; Wipe is not: call it
// once every user is done. The AES key
// schedule inside the standard library's cipher cannot be reached; Wipe
// drops the only reference to it.
func (k *Key) Wipe() {
	if k == nil {
		return
	}
	wipe(k.mem)
	if k.mapped {
		freeKeyMemory(k.mem)
	}
	k.mem, k.enc, k.id, k.mapped = nil, nil, nil, false
	k.aead = nil
}

// wipe zeroes b.
func wipe(b []byte) { clear(b) }

// String prints the whole fingerprint as PBS stores it in key files and
// manifests: 32 lower-case hex bytes joined by colons.
func (f Fingerprint) String() string { return colonHex(f[:]) }

// Short is PBS's Display of a fingerprint, the short key ID: the first
// 8 bytes, as String.
func (f Fingerprint) Short() string { return colonHex(f[:8]) }

func colonHex(b []byte) string {
	var s strings.Builder
	s.Grow(3 * len(b))
	for i, c := range b {
		if i > 0 {
			s.WriteByte(':')
		}
		s.WriteString(hex.EncodeToString([]byte{c}))
	}
	return s.String()
}

// ParseFingerprint reads a fingerprint as PBS does (FromStr): colons are
// dropped, the rest must be 64 hex digits.
func ParseFingerprint(s string) (Fingerprint, error) {
	var f Fingerprint
	h := strings.ReplaceAll(s, ":", "")
	if len(h) != 2*len(f) {
		return f, fmt.Errorf("%w: %q is not 32 bytes", ErrFingerprint, s)
	}
	if _, err := hex.Decode(f[:], []byte(h)); err != nil {
		return f, fmt.Errorf("%w: %q: %v", ErrFingerprint, s, err)
	}
	return f, nil
}

// String names the key by its short fingerprint, never its bytes; Format
// prints it for a Key and a *Key whatever the verb.
func (k Key) String() string {
	if k.aead == nil {
		return "crypt.Key(wiped)"
	}
	return "crypt.Key(" + k.fp.Short() + ")"
}

// Format prints String for every verb (%d or %x would otherwise print
// the fields, key bytes included).
func (k Key) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }
