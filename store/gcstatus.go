package store

import (
	"fmt"
	"path/filepath"

	"github.com/cairnfs/cairn/store/internal/fsutil"
)

// GCStatusName is the file in the store's directory that holds the last
// garbage collection's report, as PBS keeps .gc-status (JSON, in PBS's
// form; what it holds is jobs/gc's).
const GCStatusName = ".gc-status"

// maxGCStatus bounds what is read of a .gc-status file.
const maxGCStatus = 1 << 20

// GCStatusPath is the path of the store's .gc-status file.
func (s *Store) GCStatusPath() string { return filepath.Join(s.root, GCStatusName) }

// WriteGCStatus replaces the .gc-status file with data (a temporary
// file, synced, then renamed: a reader sees the old report or the new).
func (s *Store) WriteGCStatus(data []byte) error {
	if len(data) > maxGCStatus {
		return fmt.Errorf("write %s: %d bytes, more than %d", s.GCStatusPath(), len(data), maxGCStatus)
	}
	return fsutil.WriteFileAtomic(s.GCStatusPath(), data)
}

// ReadGCStatus reads the .gc-status file (bounded; only a regular file).
// A store that has none gives an error wrapping fs.ErrNotExist.
func (s *Store) ReadGCStatus() ([]byte, error) {
	return ReadFileBounded(s.GCStatusPath(), maxGCStatus)
}
