package keyfile

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"fmt"

	"golang.org/x/crypto/scrypt"
)

// Bounds on what a key file may ask for. PBS writes scrypt N=65536, r=8,
// p=1 (64 MiB, N·r·p = 2^19) and PBKDF2 with 65535 iterations. scrypt's
// memory is 128·N·r bytes: cairn allows 4 times PBS's (256 MiB; PBS's own
// openssl limit is 1025 MiB, so a hand-made file PBS reads may be refused
// here); its time grows with N·r·p: 16 times PBS's, and 64 times PBS's
// PBKDF2 iterations, a few seconds each and no more.
const (
	MaxScryptMem  = 1 << 21 // N·r
	MaxScryptWork = 1 << 23 // N·r·p
	MaxPBKDF2Iter = 1 << 22
	maxSalt       = 1024
)

// PBS's defaults for new key files (KeyConfig::with_key).
const (
	defaultScryptN    = 65536
	defaultScryptR    = 8
	defaultScryptP    = 1
	defaultPBKDF2Iter = 65535
	saltSize          = 32
)

// check bounds the parameters before any derivation runs.
func (p *Params) check() error {
	if len(p.Salt) > maxSalt {
		return fmt.Errorf("kdf salt of %d bytes: %w", len(p.Salt), ErrLimits)
	}
	switch p.KDF {
	case Scrypt:
		if p.N < 2 || p.N&(p.N-1) != 0 {
			return fmt.Errorf("scrypt n=%d is not a power of two above 1: %w", p.N, ErrLimits)
		}
		if p.R == 0 || p.P == 0 || p.N > MaxScryptWork || p.R > MaxScryptWork || p.P > MaxScryptWork ||
			p.N*p.R > MaxScryptMem || p.N*p.R*p.P > MaxScryptWork {
			return fmt.Errorf("scrypt n=%d r=%d p=%d (cairn computes n·r up to %d, n·r·p up to %d, r and p at least 1): %w",
				p.N, p.R, p.P, MaxScryptMem, MaxScryptWork, ErrLimits)
		}
	case PBKDF2:
		if p.Iter == 0 || p.Iter > MaxPBKDF2Iter {
			return fmt.Errorf("pbkdf2 iter=%d (cairn computes 1 to %d): %w", p.Iter, MaxPBKDF2Iter, ErrLimits)
		}
	case None:
	default:
		return fmt.Errorf("kdf %q: %w", p.KDF, ErrKDF)
	}
	return nil
}

// defaultParams are PBS's parameters for a new key with a fresh salt.
func defaultParams(kdf KDF) (Params, error) {
	p := Params{KDF: kdf}
	switch kdf {
	case Scrypt:
		p.N, p.R, p.P = defaultScryptN, defaultScryptR, defaultScryptP
	case PBKDF2:
		p.Iter = defaultPBKDF2Iter
	case None:
		return p, nil
	default:
		return p, fmt.Errorf("kdf %q (use scrypt, pbkdf2 or none): %w", kdf, ErrKDF)
	}
	p.Salt = make([]byte, saltSize)
	_, err := rand.Read(p.Salt)
	return p, err
}

// derive computes the 32-byte wrapping key; the caller wipes it.
func (p *Params) derive(passphrase []byte) ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	switch p.KDF {
	case Scrypt:
		return scrypt.Key(passphrase, p.Salt, int(p.N), int(p.R), int(p.P), 32)
	case PBKDF2:
		// crypto/pbkdf2 takes the password as a string; the copy cannot be
		// wiped, which the standard library's API leaves no way around.
		return pbkdf2.Key(sha256.New, string(passphrase), p.Salt, int(p.Iter), 32)
	}
	return nil, fmt.Errorf("kdf %q has no derivation: %w", p.KDF, ErrKDF)
}

func gcm(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCMWithNonceSize(b, 16)
}

// wrap encrypts raw under wkey: iv | tag | ciphertext.
func wrap(wkey, raw []byte) ([]byte, error) {
	a, err := gcm(wkey)
	if err != nil {
		return nil, err
	}
	iv := make([]byte, 16, 16+16+len(raw))
	if _, err := rand.Read(iv); err != nil {
		return nil, err
	}
	sealed := a.Seal(nil, iv, raw, nil) // ciphertext | tag
	n := len(raw)
	out := append(iv, sealed[n:]...)
	out = append(out, sealed[:n]...)
	wipe(sealed)
	return out, nil
}

// unwrap reverses wrap; ErrPassphrase when the tag does not verify.
func unwrap(wkey, data []byte) ([]byte, error) {
	if len(data) < 32 {
		return nil, fmt.Errorf("encrypted key of %d bytes: %w", len(data), ErrFormat)
	}
	a, err := gcm(wkey)
	if err != nil {
		return nil, err
	}
	ct := make([]byte, 0, len(data)-16)
	ct = append(ct, data[32:]...)
	ct = append(ct, data[16:32]...)
	raw, err := a.Open(nil, data[:16], ct, nil)
	if err != nil {
		return nil, ErrPassphrase
	}
	return raw, nil
}

func wipe(b []byte) { clear(b) }
