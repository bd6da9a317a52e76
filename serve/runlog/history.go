package runlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// maxFileBytes bounds what OpenHistory and OpenJournal read: a hostile
// or damaged file cannot make them allocate more.
const maxFileBytes = 8 << 20

// History is a bounded series of samples kept in one JSON file (in the
// store, so that it moves with it). It holds at most max samples: when
// full, every other sample of the older half is dropped, so the series
// spans the store's whole life at a resolution that falls with age.
type History struct {
	mu      sync.Mutex
	path    string
	max     int
	samples []Sample
}

// OpenHistory reads the history at path (none yet: an empty one) that
// keeps at most limit samples (at least 8).
func OpenHistory(path string, limit int) (*History, error) {
	h := &History{path: path, max: max(limit, 8)}
	if err := readJSON(path, &h.samples); err != nil {
		return nil, err
	}
	if len(h.samples) > h.max {
		h.samples = h.samples[len(h.samples)-h.max:]
	}
	return h, nil
}

// Add appends s and writes the file (temp file, then rename).
func (h *History) Add(s Sample) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, s)
	if len(h.samples) > h.max {
		h.samples = thin(h.samples)
	}
	return writeJSON(h.path, h.samples)
}

// Samples returns a copy of the series, oldest first.
func (h *History) Samples() []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Sample(nil), h.samples...)
}

// thin drops every other sample of the older half of s.
func thin(s []Sample) []Sample {
	half := len(s) / 2
	out := make([]Sample, 0, len(s))
	for i := 0; i < half; i += 2 {
		out = append(out, s[i])
	}
	return append(out, s[half:]...)
}

// readJSON decodes the file at path into v; a missing file leaves v as
// it is. Errors name the file.
func readJSON(path string, v any) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFileBytes {
		return fmt.Errorf("%s: larger than %d bytes", path, maxFileBytes)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: not a cairn serve record: %w", path, err)
	}
	return nil
}

// writeJSON writes v to path through a temporary file and a rename, so
// a crash leaves the old file or the new one.
func writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
