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

// Bounds on what a key file may ask for, checked before any derivation.
//
// scrypt (golang.org/x/crypto/scrypt) allocates 128·r·n bytes for its
// table V, 128·r·p for the blocks B and 256·r for its scratch XY: 128·r·
// (n+p+2) bytes in all, whatever n·r alone says (p=2^22 with n=2, r=1
// took 543 MB). Its time is 2·n·r·p block mixes plus the PBKDF2 over B,
// 4·r·p HMAC blocks that measured as dear as 2·r·p more of n·r·p: work
// r·p·(n+2), about 0.7 µs a unit on a loaded 2-core machine. PBS writes
// every key file with n=65536, r=8, p=1 (KeyConfig::with_key): 64 MiB
// and 2^19 units, 0.33 s. cairn computes 4 times that memory and 8 times
// that work at most (a few seconds); PBS's own limit is openssl's maxmem
// of 1025 MiB, so a hand-made file PBS reads may be refused here.
// PBKDF2's time is its iterations: 64 times PBS's 65535 at most.
const (
	MaxScryptMemory = 256 << 20 // bytes: 128·r·(n+p+2)
	MaxScryptWork   = 1 << 22   // r·p·(n+2)
	MaxPBKDF2Iter   = 1 << 22
	maxSalt         = 1024
)

// scryptWithin says whether scrypt with n, r, p stays within
// MaxScryptMemory and MaxScryptWork, without overflow: a factor beyond
// the memory bound alone is refused before any product is taken, and
// the memory bound keeps r·p and n+2 under 2^21 for the work's product.
func scryptWithin(n, r, p uint64) bool {
	const lim = MaxScryptMemory / 128 // bound on r·(n+p+2)
	if n > lim || r > lim || p > lim || r*(n+p+2) > lim {
		return false
	}
	return r*p*(n+2) <= MaxScryptWork
}

// scryptCost is what scrypt with n, r, p would take, for messages:
// bytes of memory and units of work (floats: a hostile file's may
// overflow 64 bits).
func scryptCost(n, r, p uint64) (mem, work float64) {
	fn, fr, fp := float64(n), float64(r), float64(p)
	return 128 * fr * (fn + fp + 2), fr * fp * (fn + 2)
}

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
			return fmt.Errorf("scrypt n=%d r=%d p=%d: n is not a power of two above 1: %w", p.N, p.R, p.P, ErrLimits)
		}
		if p.R == 0 || p.P == 0 {
			return fmt.Errorf("scrypt n=%d r=%d p=%d: r and p must be at least 1: %w", p.N, p.R, p.P, ErrLimits)
		}
		if !scryptWithin(p.N, p.R, p.P) {
			mem, work := scryptCost(p.N, p.R, p.P)
			return fmt.Errorf("scrypt n=%d r=%d p=%d would take %s of memory and %.3g units of work, r·p·(n+2); "+
				"cairn computes at most %s and %d (PBS writes n=65536 r=8 p=1: 64 MiB, 524304): %w",
				p.N, p.R, p.P, humanBytes(mem), work, humanBytes(MaxScryptMemory), MaxScryptWork, ErrLimits)
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

// humanBytes formats n bytes in binary units: "1.0 GiB".
func humanBytes(n float64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for ; n >= 1024 && i < len(units)-1; i++ {
		n /= 1024
	}
	if i == 0 {
		return fmt.Sprintf("%.0f bytes", n)
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}
