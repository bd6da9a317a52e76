package pbscheck

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ManifestName is the manifest's file name in a snapshot directory.
const ManifestName = "index.json.blob"

// FileInfo is one entry of the manifest's files[] (PBS's FileInfo).
type FileInfo struct {
	Filename  string `json:"filename"`
	CryptMode string `json:"crypt-mode"`
	Size      uint64 `json:"size"`
	Csum      string `json:"csum"`
}

// Manifest is the part of PBS's BackupManifest the checks read.
type Manifest struct {
	BackupType  string                     `json:"backup-type"`
	BackupID    string                     `json:"backup-id"`
	BackupTime  int64                      `json:"backup-time"`
	Files       []FileInfo                 `json:"files"`
	Unprotected map[string]json.RawMessage `json:"unprotected"`
	Signature   *string                    `json:"signature"`
}

// ReadManifest reads a snapshot directory's manifest: a DataBlob
// (plain or zstd; PBS writes zstd) of JSON, and checks that its type,
// id and time are those of the directory (…/TYPE/ID/TIME) and that
// each file it lists is named once with a valid crypt mode and csum.
func ReadManifest(snapDir string) (*Manifest, error) {
	path := filepath.Join(snapDir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	data, err := decodeBlob(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: JSON: %v", path, err)
	}
	tm := filepath.Base(snapDir)
	id := filepath.Base(filepath.Dir(snapDir))
	typ := filepath.Base(filepath.Dir(filepath.Dir(snapDir)))
	if m.BackupType != typ || m.BackupID != id || time.Unix(m.BackupTime, 0).UTC().Format("2006-01-02T15:04:05Z") != tm {
		return nil, fmt.Errorf("%s: names %s/%s/%s, the directory is %s/%s/%s", path, m.BackupType, m.BackupID,
			time.Unix(m.BackupTime, 0).UTC().Format(time.RFC3339), typ, id, tm)
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		if seen[f.Filename] || f.Filename == "" || filepath.Base(f.Filename) != f.Filename {
			return nil, fmt.Errorf("%s: file name %q repeated or not a plain name", path, f.Filename)
		}
		seen[f.Filename] = true
		switch f.CryptMode {
		case "none", "encrypt", "sign-only":
		default:
			return nil, fmt.Errorf("%s: %s: crypt-mode %q", path, f.Filename, f.CryptMode)
		}
		if c, err := hex.DecodeString(f.Csum); err != nil || len(c) != 32 {
			return nil, fmt.Errorf("%s: %s: csum %q is not 32 bytes of hex", path, f.Filename, f.Csum)
		}
	}
	return &m, nil
}
