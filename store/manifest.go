package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/internal/fsutil"
)

// ManifestName is the manifest's file name in a snapshot directory.
const ManifestName = "index.json.blob"

// FileInfo is one entry of a manifest's file list. For an index, Csum is
// its index checksum and Size the size of its data; for a blob, Csum is
// the SHA-256 of the blob file and Size the file's size.
type FileInfo struct {
	Filename  string `json:"filename"`
	CryptMode string `json:"crypt-mode"`
	Size      uint64 `json:"size"`
	Csum      string `json:"csum"`
}

// VerifyState is the result of the last verification of a snapshot.
type VerifyState struct {
	State string `json:"state"` // "ok" or "failed"
	UPID  string `json:"upid"`
}

// Manifest is a snapshot's index.json, with PBS's field names. Fields
// this version does not know survive a read-modify-write, in Extra (top
// level) and in Unprotected.
type Manifest struct {
	BackupType  string                     `json:"backup-type"`
	BackupID    string                     `json:"backup-id"`
	BackupTime  int64                      `json:"backup-time"`
	Files       []FileInfo                 `json:"files"`
	Unprotected map[string]json.RawMessage `json:"unprotected"`
	Signature   *string                    `json:"signature,omitempty"`
	// Extra holds top-level fields this version does not know, written
	// back unchanged.
	Extra map[string]json.RawMessage `json:"-"`

	// raw is the JSON the manifest was decoded from: its signature is
	// checked over what was stored (SnapshotKey). nil for a manifest
	// made in memory.
	raw []byte
	// auth remembers a signature checked once (keys.go); shared by copies.
	auth *manifestAuth
}

var manifestKeys = map[string]bool{"backup-type": true, "backup-id": true, "backup-time": true,
	"files": true, "unprotected": true, "signature": true}

// manifestJSON has Manifest's fields without its methods, for the codec.
type manifestJSON Manifest

// UnmarshalJSON keeps unknown top-level fields in Extra. It reads the
// JSON once: each top-level value is decoded straight into its field
// (json.Unmarshal of the struct and again of a map read it four times).
func (m *Manifest) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil {
		return err
	} else if t != json.Delim('{') {
		return fmt.Errorf("manifest: want a JSON object, got %v", t)
	}
	var known manifestJSON
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := t.(string) // object keys are strings
		if err := known.decodeField(dec, k); err != nil {
			return fmt.Errorf("manifest field %q: %w", k, err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("manifest: data after the JSON object")
	}
	*m = Manifest(known)
	return nil
}

// decodeField decodes the value of top-level key k into its field, an
// unknown key's into Extra. A repeated key keeps the last value, as
// json.Unmarshal does.
func (m *manifestJSON) decodeField(dec *json.Decoder, k string) error {
	switch k {
	case "backup-type":
		return dec.Decode(&m.BackupType)
	case "backup-id":
		return dec.Decode(&m.BackupID)
	case "backup-time":
		return dec.Decode(&m.BackupTime)
	case "files":
		m.Files = nil
		return dec.Decode(&m.Files)
	case "unprotected":
		m.Unprotected = nil
		return dec.Decode(&m.Unprotected)
	case "signature":
		m.Signature = nil
		return dec.Decode(&m.Signature)
	}
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if m.Extra == nil {
		m.Extra = map[string]json.RawMessage{}
	}
	m.Extra[k] = v
	return nil
}

// MarshalJSON writes the known fields and then Extra.
func (m *Manifest) MarshalJSON() ([]byte, error) {
	known, err := json.Marshal((*manifestJSON)(m))
	if err != nil || len(m.Extra) == 0 {
		return known, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(known, &all); err != nil {
		return nil, err
	}
	for k, v := range m.Extra {
		if !manifestKeys[k] {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// File returns the manifest entry for filename.
func (m *Manifest) File(filename string) (FileInfo, bool) {
	for _, f := range m.Files {
		if f.Filename == filename {
			return f, true
		}
	}
	return FileInfo{}, false
}

// VerifyState returns the recorded verify state, if any.
func (m *Manifest) VerifyState() (VerifyState, bool) {
	var vs VerifyState
	raw, ok := m.Unprotected["verify_state"]
	if !ok || json.Unmarshal(raw, &vs) != nil {
		return vs, false
	}
	return vs, true
}

// SetVerifyState records a verify result.
func (m *Manifest) SetVerifyState(vs VerifyState) {
	raw, _ := json.Marshal(vs) // a struct of strings always marshals
	if m.Unprotected == nil {
		m.Unprotected = map[string]json.RawMessage{}
	}
	m.Unprotected["verify_state"] = raw
}

// CsumHex formats a checksum for the manifest.
func CsumHex(sum [32]byte) string { return hex.EncodeToString(sum[:]) }

// ReadManifest loads and checks a snapshot's manifest.
func (s *Store) ReadManifest(snap Snapshot) (*Manifest, error) {
	path := filepath.Join(s.SnapshotPath(snap), ManifestName)
	blob, err := s.backend.ReadFile(context.Background(), SnapshotFile(snap, ManifestName), MaxManifestBlob)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w: %w", path, ErrUnfinished, ErrNotFound)
		}
		var big *errTooLarge
		if errors.As(err, &big) {
			return nil, fmt.Errorf("%w: %w", ErrBadManifest, err)
		}
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return decodeManifest(path, blob, snap)
}

// ParseManifest decodes and checks the manifest blob of snap read from
// elsewhere (a tape), as ReadManifest does; path names it in errors.
// Its signature is checked over these bytes (SnapshotKey).
func ParseManifest(path string, blob []byte, snap Snapshot) (*Manifest, error) {
	return decodeManifest(path, blob, snap)
}

func decodeManifest(path string, blob []byte, snap Snapshot) (*Manifest, error) {
	data, err := chunk.DecodeBlob(nil, blob, maxManifest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrBadManifest, err)
	}
	var m Manifest
	if err := m.UnmarshalJSON(data); err != nil { // not json.Unmarshal: that reads it once more first
		return nil, fmt.Errorf("%s: %w: %v", path, ErrBadManifest, err)
	}
	m.raw, m.auth = data, new(manifestAuth)
	if _, _, err := m.KeyFingerprint(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.BackupType != snap.Type || m.BackupID != snap.ID || m.BackupTime != snap.Time.Unix() {
		return nil, fmt.Errorf("%s: %w: names %s/%s/%d, directory is %s", path, ErrBadManifest,
			m.BackupType, m.BackupID, m.BackupTime, snap)
	}
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		if seen[f.Filename] {
			return nil, fmt.Errorf("%s: %w: file %q listed twice", path, ErrBadManifest, f.Filename)
		}
		seen[f.Filename] = true
		if f.Filename == "" || strings.ContainsAny(f.Filename, "/\x00") || f.Filename == "." || f.Filename == ".." {
			return nil, fmt.Errorf("%s: %w: file name %q", path, ErrBadManifest, f.Filename)
		}
		switch f.CryptMode {
		case "", CryptNone, CryptEncrypt, CryptSignOnly:
		default:
			return nil, fmt.Errorf("%s: %w: crypt-mode of %s: %q", path, ErrBadManifest, f.Filename, f.CryptMode)
		}
		if _, err := hex.DecodeString(f.Csum); err != nil || len(f.Csum) != 64 {
			return nil, fmt.Errorf("%s: %w: checksum of %s: %q", path, ErrBadManifest, f.Filename, f.Csum)
		}
	}
	return &m, nil
}

// WriteManifest writes a snapshot's manifest atomically (temp + rename).
// Writing it is what makes a snapshot finished. On a remote store it is
// put into the bucket first (s3store/meta.go).
func (s *Store) WriteManifest(snap Snapshot, m *Manifest) error {
	blob, err := EncodeManifest(snap, m)
	if err != nil {
		return err
	}
	return s.meta.WriteManifest(context.Background(), snap, blob)
}

// EncodeManifest makes m's blob.
func EncodeManifest(snap Snapshot, m *Manifest) ([]byte, error) {
	data, err := marshalManifest(snap, m)
	if err != nil {
		return nil, err
	}
	blob, err := chunk.EncodeBlob(nil, data, true)
	if err != nil {
		return nil, fmt.Errorf("encode manifest of %s: %w", snap, err)
	}
	return blob, nil
}

// marshalManifest is the JSON encodeManifest stores for m.
func marshalManifest(snap Snapshot, m *Manifest) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode manifest of %s: %w", snap, err)
	}
	return data, nil
}

// UpdateManifest runs fn on the manifest under the manifest lock and
// writes the result: lock, load, modify, replace.
func (s *Store) UpdateManifest(ctx context.Context, snap Snapshot, fn func(*Manifest) error) error {
	l, err := s.LockManifest(ctx, snap)
	if err != nil {
		return err
	}
	defer l.Unlock()
	return s.meta.UpdateManifest(ctx, snap, fn)
}

// CommitManifest finishes a snapshot written outside a Backup (a tape
// restore): its manifest, written to the hidden file tmp of the snapshot
// directory, is renamed into place, last; on a remote store the bucket
// has the snapshot first (MetaStore.CommitManifest). A verify state in
// the manifest is the source store's, not this one's: it is dropped, so
// the snapshot shows as not verified here.
func (s *Store) CommitManifest(ctx context.Context, snap Snapshot, tmp string) error {
	if !strings.HasPrefix(tmp, ".") || strings.ContainsAny(tmp, "/\x00") {
		return fmt.Errorf("snapshot %s: temporary manifest %q: %w", snap, tmp, ErrBadName)
	}
	if err := dropVerifyState(filepath.Join(s.SnapshotPath(snap), tmp), snap); err != nil {
		return err
	}
	return s.meta.CommitManifest(ctx, snap, tmp)
}

// dropVerifyState rewrites the manifest at path without its verify
// state, if it has one.
func dropVerifyState(path string, snap Snapshot) error {
	blob, err := ReadFileBounded(path, MaxManifestBlob)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", snap, err)
	}
	m, err := decodeManifest(path, blob, snap)
	if err != nil {
		return err
	}
	if _, ok := m.Unprotected["verify_state"]; !ok {
		return nil
	}
	delete(m.Unprotected, "verify_state")
	if blob, err = EncodeManifest(snap, m); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, blob)
}
