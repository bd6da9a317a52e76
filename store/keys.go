package store

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/cairnfs/cairn/crypt"
)

// Encrypted snapshots (issue 18), as PBS keeps them:
//
//   - every chunk of an encrypted archive is an encrypted DataBlob named
//     by the keyed digest SHA-256(plain ‖ id_key) (chunk.EncodeEncryptedBlob,
//     crypt.Key.Digest), so chunks of different keys, and plain ones,
//     never deduplicate with each other;
//   - index files (.fidx/.didx) are plain: their digests are the keyed ones;
//   - blob archives are encrypted blobs; the manifest's file entries say
//     "crypt-mode": "encrypt";
//   - the manifest itself stays a plain blob, signed: "signature" is the
//     hex of crypt.Key.ManifestSignature over its protected part, and
//     unprotected "key-fingerprint" names the key;
//   - with a master public key, the key file wrapped with it is the blob
//     rsa-encrypted.key.blob (plain, "crypt-mode": "none").
//
// A Store holds the keys a command was given (SetKeys); every reader
// finds a snapshot's key through SnapshotKey, by the fingerprint its
// manifest names.

// Crypt modes of manifest entries, as PBS writes them.
const (
	CryptNone     = "none"
	CryptEncrypt  = "encrypt"
	CryptSignOnly = "sign-only"
)

// MasterKeyBlob is the blob holding the backup's key file wrapped with
// the master public key.
const MasterKeyBlob = "rsa-encrypted.key.blob"

// ErrKeyMissing is an encrypted snapshot whose key the command was not
// given; its errors are *KeyMissingError.
var ErrKeyMissing = errors.New("encrypted with a key that was not given (--keyfile)")

// KeyMissingError names the snapshot and the fingerprint of the key it
// needs.
type KeyMissingError struct {
	Snapshot    Snapshot
	Fingerprint crypt.Fingerprint
}

func (e *KeyMissingError) Error() string {
	return fmt.Sprintf("snapshot %s: %v: key fingerprint %s", e.Snapshot, ErrKeyMissing, e.Fingerprint.Short())
}

// Unwrap makes errors.Is(err, ErrKeyMissing) true.
func (e *KeyMissingError) Unwrap() error { return ErrKeyMissing }

// Keys are the keys a command was given, by fingerprint. The zero value
// and nil hold none.
type Keys struct {
	byFP map[crypt.Fingerprint]*crypt.Key
	list []*crypt.Key
}

// NewKeys holds ks (a key given twice is held once).
func NewKeys(ks ...*crypt.Key) *Keys {
	k := &Keys{byFP: map[crypt.Fingerprint]*crypt.Key{}}
	for _, key := range ks {
		if key == nil {
			continue
		}
		if _, dup := k.byFP[key.Fingerprint()]; !dup {
			k.byFP[key.Fingerprint()] = key
			k.list = append(k.list, key)
		}
	}
	return k
}

// Lookup returns the key of fingerprint fp.
func (k *Keys) Lookup(fp crypt.Fingerprint) (*crypt.Key, bool) {
	if k == nil {
		return nil, false
	}
	key, ok := k.byFP[fp]
	return key, ok
}

// All returns the keys in the order given.
func (k *Keys) All() []*crypt.Key {
	if k == nil {
		return nil
	}
	return k.list
}

// Wipe wipes every key.
func (k *Keys) Wipe() {
	for _, key := range k.All() {
		key.Wipe()
	}
}

// SetKeys gives the store the keys its readers may use (nil: none).
// Call it before the store is shared between goroutines.
func (s *Store) SetKeys(k *Keys) { s.keys = k }

// Keys returns the keys SetKeys gave (nil when none).
func (s *Store) Keys() *Keys { return s.keys }

// CryptMode is the snapshot's crypt mode: CryptEncrypt when any of its
// files is encrypted, CryptSignOnly when signed only, else CryptNone.
func (m *Manifest) CryptMode() string {
	mode := CryptNone
	for _, f := range m.Files {
		switch f.CryptMode {
		case CryptEncrypt:
			return CryptEncrypt
		case CryptSignOnly:
			mode = CryptSignOnly
		}
	}
	return mode
}

// KeyFingerprint is the fingerprint the manifest's unprotected
// "key-fingerprint" names; ok is false when it names none. A value that
// is not a fingerprint is an error wrapping ErrBadManifest.
func (m *Manifest) KeyFingerprint() (fp crypt.Fingerprint, ok bool, err error) {
	raw, ok := m.Unprotected[unprotectedKeyFP]
	if !ok || string(raw) == "null" { // PBS reads a null as none
		return fp, false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fp, false, fmt.Errorf("%w: key-fingerprint %.80s is not a string", ErrBadManifest, raw)
	}
	if fp, err = crypt.ParseFingerprint(s); err != nil {
		return fp, false, fmt.Errorf("%w: key-fingerprint: %w", ErrBadManifest, err)
	}
	return fp, true, nil
}

// unprotectedKeyFP is the unprotected field naming the key, as PBS.
const unprotectedKeyFP = "key-fingerprint"

// manifestAuth remembers the key fingerprint a decoded manifest's
// signature was found good with, so that SnapshotKey checks it once.
type manifestAuth struct {
	mu       sync.Mutex
	verified map[crypt.Fingerprint]bool
}

func (a *manifestAuth) ok(fp crypt.Fingerprint) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.verified[fp]
}

func (a *manifestAuth) set(fp crypt.Fingerprint) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.verified == nil {
		a.verified = map[crypt.Fingerprint]bool{}
	}
	a.verified[fp] = true
}

// SnapshotKey returns the key snapshot snap (manifest m) is encrypted or
// signed with, after checking m's signature with it: nil, nil for a
// plain snapshot. A key the store was not given is a *KeyMissingError;
// a manifest whose signature fails wraps crypt.ErrSignature (and
// ErrBadManifest), naming the manifest file. An encrypted or signed
// manifest that names no key, or has no signature, is a bad manifest.
// The signature is checked over the JSON the manifest was decoded from,
// once per decoded manifest (readers call this per open).
func (s *Store) SnapshotKey(snap Snapshot, m *Manifest) (*crypt.Key, error) {
	path := filepath.Join(s.SnapshotPath(snap), ManifestName)
	fp, hasFP, err := m.KeyFingerprint()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.CryptMode() == CryptNone && m.Signature == nil && !hasFP {
		return nil, nil
	}
	if !hasFP {
		return nil, fmt.Errorf("%s: %w: %s snapshot whose manifest names no key-fingerprint", path, ErrBadManifest, m.CryptMode())
	}
	key, ok := s.Keys().Lookup(fp)
	if !ok {
		return nil, &KeyMissingError{Snapshot: snap, Fingerprint: fp}
	}
	if m.auth.ok(fp) {
		return key, nil
	}
	raw := m.raw
	if raw == nil { // made in memory: its JSON as it would be written
		if raw, err = json.Marshal(m); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", path, ErrBadManifest, err)
		}
	}
	if err := key.VerifyManifest(raw); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrBadManifest, err)
	}
	m.auth.set(fp)
	return key, nil
}

// Encrypt makes the backup an encrypted one with key: call it before any
// archive is written. Its chunks are named by key's digest and
// encrypted, its blobs encrypted, its manifest signed and naming key's
// fingerprint. The Backup does not own key (the caller wipes it).
func (b *Backup) Encrypt(key *crypt.Key) error {
	switch {
	case key == nil:
		return fmt.Errorf("snapshot %s: encrypt: no key", b.snap)
	case b.key != nil:
		return fmt.Errorf("snapshot %s: encrypt: the backup is encrypted already", b.snap)
	case len(b.files) > 0:
		return fmt.Errorf("snapshot %s: encrypt: archives were written already", b.snap)
	case b.base != nil:
		return fmt.Errorf("snapshot %s: encrypt: a copied snapshot keeps its source's manifest", b.snap)
	}
	b.key = key
	b.refMu.Lock()
	b.refs = nil // picked under no key: picked again (the bases stay held)
	b.refMu.Unlock()
	return nil
}

// keyMatches tells whether a snapshot with manifest m may be a
// reference of this backup: its chunks are named as this backup's are
// (the same key, or plain like this one), as PBS requires. A manifest
// encrypted or signed without naming its key never is.
func (b *Backup) keyMatches(m *Manifest) bool {
	fp, hasFP, err := m.KeyFingerprint()
	if err != nil || (!hasFP && (m.CryptMode() != CryptNone || m.Signature != nil)) {
		return false
	}
	if b.key == nil {
		return !hasFP
	}
	return hasFP && fp == b.key.Fingerprint()
}

// signManifest names key's fingerprint in m and signs m's protected
// part, as PBS's BackupManifest::to_string does; the JSON that is then
// written (encodeManifest) is checked to verify.
func signManifest(snap Snapshot, m *Manifest, key *crypt.Key) error {
	fp, _ := json.Marshal(key.Fingerprint().String())
	m.Unprotected[unprotectedKeyFP] = fp
	m.Signature = nil
	data, err := json.Marshal(m)
	if err == nil {
		var sig [32]byte
		if sig, err = key.ManifestSignature(data); err == nil {
			hexSig := hex.EncodeToString(sig[:])
			m.Signature = &hexSig
			data, err = marshalManifest(snap, m)
		}
	}
	if err == nil {
		err = key.VerifyManifest(data)
	}
	if err != nil {
		return fmt.Errorf("sign manifest of %s: %w", snap, err)
	}
	return nil
}

// Key returns the key Encrypt gave (nil for a plain backup).
func (b *Backup) Key() *crypt.Key { return b.key }
