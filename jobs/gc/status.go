package gc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cairnfs/cairn/store"
)

// ReadStatus returns the report the last GC saved in the store; ok is
// false when no GC has saved one. A file that is not a report is an
// error naming it.
func ReadStatus(s *store.Store) (rep Report, ok bool, err error) {
	b, err := s.ReadGCStatus()
	if errors.Is(err, fs.ErrNotExist) {
		return Report{}, false, nil
	}
	if err != nil {
		return Report{}, false, fmt.Errorf("last GC status: %w", err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return Report{}, false, fmt.Errorf("last GC status %s: not a GC report: %w", s.GCStatusPath(), err)
	}
	return rep, true, nil
}

// saveStatus writes rep to the store's .gc-status.
func saveStatus(s *store.Store, rep Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return s.WriteGCStatus(append(b, '\n'))
}
