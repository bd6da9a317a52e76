package keyfile

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
)

// The RSA master key: PBS's `key create-master-key` writes an RSA key
// pair, the private key as encrypted PKCS#8 PEM (PBES2: PBKDF2-HMAC-
// SHA256 and AES-256-CBC, as openssl writes it), the public key as
// "PUBLIC KEY" PEM. A backup made with the master public key carries its
// key file encrypted for it (rsa_encrypt_key_config: RSA PKCS#1 v1.5 of
// the key file's compact JSON, one RSA block, `rsa-encrypted.key.blob`),
// so the private master key recovers a lost key file.

// ErrMaster: a master key or wrapped key that cannot be used.
var ErrMaster = errors.New("bad RSA master key or wrapped key file")

// MasterBits is the size of new master keys (PBS uses 4096).
const MasterBits = 4096

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
)

type encryptedPKInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

type pbes2Params struct {
	KDF    pkix.AlgorithmIdentifier
	Scheme pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt      []byte
	Iter      int
	KeyLength int                      `asn1:"optional"`
	PRF       pkix.AlgorithmIdentifier `asn1:"optional"`
}

// MarshalMaster returns the private key as encrypted PKCS#8 PEM under
// passphrase and the public key as PEM.
func MarshalMaster(priv *rsa.PrivateKey, passphrase []byte) (privPEM, pubPEM []byte, err error) {
	if len(passphrase) < MinPassphrase {
		return nil, nil, ErrShortPassphrase
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	defer wipe(der)
	salt, iv := make([]byte, 16), make([]byte, aes.BlockSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, nil, err
	}
	if _, err := rand.Read(iv); err != nil {
		return nil, nil, err
	}
	const iter = 2048 // openssl's default for PKCS#8
	kdfParams, _ := asn1.Marshal(pbkdf2Params{Salt: salt, Iter: iter,
		PRF: pkix.AlgorithmIdentifier{Algorithm: oidHMACSHA256, Parameters: asn1.NullRawValue}})
	ivDER, _ := asn1.Marshal(iv)
	params, err := asn1.Marshal(pbes2Params{
		KDF:    pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: kdfParams}},
		Scheme: pkix.AlgorithmIdentifier{Algorithm: oidAES256CBC, Parameters: asn1.RawValue{FullBytes: ivDER}},
	})
	if err != nil {
		return nil, nil, err
	}
	wkey, err := pbkdf2.Key(sha256.New, string(passphrase), salt, iter, 32)
	if err != nil {
		return nil, nil, err
	}
	defer wipe(wkey)
	block, _ := aes.NewCipher(wkey)
	pad := aes.BlockSize - len(der)%aes.BlockSize
	buf := make([]byte, len(der)+pad)
	copy(buf, der)
	for i := len(der); i < len(buf); i++ {
		buf[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(buf, buf)
	out, err := asn1.Marshal(encryptedPKInfo{
		Algo: pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: asn1.RawValue{FullBytes: params}},
		Data: buf,
	})
	if err != nil {
		return nil, nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: out}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), nil
}

// ParseMasterPrivate decrypts an encrypted PKCS#8 PEM private RSA key;
// name is the file's name for errors.
func ParseMasterPrivate(name string, data, passphrase []byte) (*rsa.PrivateKey, error) {
	e, err := parseEncryptedPKCS8(name, data)
	if err != nil {
		return nil, err
	}
	wkey, err := pbkdf2.Key(sha256.New, string(passphrase), e.salt, e.iter, 32)
	if err != nil {
		return nil, fmt.Errorf("master key %s: %v: %w", name, err, ErrMaster)
	}
	defer wipe(wkey)
	block, _ := aes.NewCipher(wkey)
	der := make([]byte, len(e.data))
	defer wipe(der)
	cipher.NewCBCDecrypter(block, e.iv).CryptBlocks(der, e.data)
	pad := int(der[len(der)-1])
	if pad < 1 || pad > aes.BlockSize {
		return nil, fmt.Errorf("master key %s: %w", name, ErrPassphrase)
	}
	key, err := x509.ParsePKCS8PrivateKey(der[:len(der)-pad])
	if err != nil {
		return nil, fmt.Errorf("master key %s: %w", name, ErrPassphrase)
	}
	rk, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("master key %s: not an RSA key: %w", name, ErrMaster)
	}
	return rk, nil
}

// encryptedPKCS8 is what decrypting a PBES2 PKCS#8 key needs.
type encryptedPKCS8 struct {
	salt, iv, data []byte
	iter           int
}

// parseEncryptedPKCS8 checks the PEM and its PBES2 parameters (bounded)
// before any key derivation.
func parseEncryptedPKCS8(name string, data []byte) (*encryptedPKCS8, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("master key %s: %s: %w", name, fmt.Sprintf(format, a...), ErrMaster)
	}
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "ENCRYPTED PRIVATE KEY" {
		return nil, bad("no ENCRYPTED PRIVATE KEY PEM block")
	}
	var info encryptedPKInfo
	var p pbes2Params
	var kp pbkdf2Params
	var iv []byte
	if rest, err := asn1.Unmarshal(b.Bytes, &info); err != nil || len(rest) > 0 || !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, bad("not PBES2-encrypted PKCS#8")
	}
	if _, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &p); err != nil ||
		!p.KDF.Algorithm.Equal(oidPBKDF2) || !p.Scheme.Algorithm.Equal(oidAES256CBC) {
		return nil, bad("cairn reads PBKDF2 with AES-256-CBC only")
	}
	if _, err := asn1.Unmarshal(p.KDF.Parameters.FullBytes, &kp); err != nil || !kp.PRF.Algorithm.Equal(oidHMACSHA256) {
		return nil, bad("cairn reads PBKDF2 with HMAC-SHA256 only")
	}
	if kp.Iter < 1 || kp.Iter > MaxPBKDF2Iter || len(kp.Salt) > maxSalt {
		return nil, fmt.Errorf("master key %s: pbkdf2 iter=%d: %w", name, kp.Iter, ErrLimits)
	}
	if _, err := asn1.Unmarshal(p.Scheme.Parameters.FullBytes, &iv); err != nil || len(iv) != aes.BlockSize {
		return nil, bad("bad AES-CBC iv")
	}
	if len(info.Data) == 0 || len(info.Data)%aes.BlockSize != 0 {
		return nil, bad("encrypted data of %d bytes", len(info.Data))
	}
	return &encryptedPKCS8{salt: kp.Salt, iv: iv, data: info.Data, iter: kp.Iter}, nil
}

// ParseMasterPublic reads a "PUBLIC KEY" PEM RSA key.
func ParseMasterPublic(name string, data []byte) (*rsa.PublicKey, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("master public key %s: no PUBLIC KEY PEM block: %w", name, ErrMaster)
	}
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if rk, ok := k.(*rsa.PublicKey); err == nil && ok {
		return rk, nil
	}
	return nil, fmt.Errorf("master public key %s: not an RSA public key: %w", name, ErrMaster)
}

// WrapRSA encrypts the key file c for the master public key, as PBS's
// rsa_encrypt_key_config: PKCS#1 v1.5 of its compact JSON.
func WrapRSA(pub *rsa.PublicKey, c *Config) ([]byte, error) {
	data, err := c.Marshal()
	if err != nil {
		return nil, err
	}
	defer wipe(data)
	//lint:ignore SA1019 PBS's format is PKCS#1 v1.5 (openssl Padding::PKCS1)
	out, err := rsa.EncryptPKCS1v15(rand.Reader, pub, data) //nolint:staticcheck
	if err != nil {
		return nil, fmt.Errorf("wrapping the key file for the master key: %w", err)
	}
	return out, nil
}

// UnwrapRSA recovers the key file WrapRSA wrapped; name names the blob.
func UnwrapRSA(priv *rsa.PrivateKey, name string, blob []byte) (*Config, error) {
	//lint:ignore SA1019 PBS's format is PKCS#1 v1.5 (openssl Padding::PKCS1)
	data, err := rsa.DecryptPKCS1v15(nil, priv, blob) //nolint:staticcheck
	if err != nil {
		return nil, fmt.Errorf("wrapped key %s: not for this master key or damaged: %w", name, ErrMaster)
	}
	defer wipe(data)
	return Parse(name, data)
}
