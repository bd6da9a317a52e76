package gc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cairnfs/cairn/store"
)

// pbsStatus is .gc-status as PBS reads and writes it: its
// GarbageCollectionStatus, kebab-case keys, every counter present (PBS
// fails to read a file that lacks one). cairn's whole Report rides along
// under "cairn", a key PBS passes over, so a store cairn collected shows
// its last GC in PBS too, and one PBS collected shows it in cairn.
type pbsStatus struct {
	UPID           *string `json:"upid"`
	IndexFileCount int64   `json:"index-file-count"`
	IndexDataBytes int64   `json:"index-data-bytes"`
	DiskBytes      int64   `json:"disk-bytes"`
	DiskChunks     int64   `json:"disk-chunks"`
	RemovedBytes   int64   `json:"removed-bytes"`
	RemovedChunks  int64   `json:"removed-chunks"`
	PendingBytes   int64   `json:"pending-bytes"`
	PendingChunks  int64   `json:"pending-chunks"`
	RemovedBad     int64   `json:"removed-bad"`
	StillBad       int64   `json:"still-bad"`
	Cairn          *Report `json:"cairn,omitempty"`
}

// ReadStatus returns the report the last GC saved in the store; ok is
// false when no GC has saved one. A status PBS wrote (no cairn report in
// it) gives a report of PBS's counters, state "ok". A file that is not a
// GC status is an error naming it.
func ReadStatus(s *store.Store) (rep Report, ok bool, err error) {
	b, err := s.ReadGCStatus()
	if errors.Is(err, fs.ErrNotExist) {
		return Report{}, false, nil
	}
	if err != nil {
		return Report{}, false, fmt.Errorf("last GC status: %w", err)
	}
	var st pbsStatus
	if err := json.Unmarshal(b, &st); err != nil {
		return Report{}, false, fmt.Errorf("last GC status %s: not a GC status: %w", s.GCStatusPath(), err)
	}
	if st.Cairn != nil {
		return *st.Cairn, true, nil
	}
	if !hasPBSKeys(b) {
		return Report{}, false, fmt.Errorf("last GC status %s: not a GC status (neither cairn's report nor PBS's counters)", s.GCStatusPath())
	}
	rep = Report{State: StateOK, IndexFileCount: st.IndexFileCount, IndexDataBytes: st.IndexDataBytes,
		DiskBytes: st.DiskBytes, DiskChunks: st.DiskChunks, RemovedBytes: st.RemovedBytes,
		RemovedChunks: st.RemovedChunks, PendingBytes: st.PendingBytes, PendingChunks: st.PendingChunks,
		RemovedBad: st.RemovedBad, StillBad: st.StillBad}
	if st.UPID != nil {
		rep.UPID = *st.UPID
	}
	if rep.DiskBytes > 0 {
		rep.DedupFactor = float64(rep.IndexDataBytes) / float64(rep.DiskBytes)
	}
	return rep, true, nil
}

// saveStatus writes rep to the store's .gc-status, in PBS's form.
func saveStatus(s *store.Store, rep Report) error {
	st := pbsStatus{IndexFileCount: rep.IndexFileCount, IndexDataBytes: rep.IndexDataBytes,
		DiskBytes: rep.DiskBytes, DiskChunks: rep.DiskChunks, RemovedBytes: rep.RemovedBytes,
		RemovedChunks: rep.RemovedChunks, PendingBytes: rep.PendingBytes, PendingChunks: rep.PendingChunks,
		RemovedBad: rep.RemovedBad, StillBad: rep.StillBad, Cairn: &rep}
	if rep.UPID != "" {
		st.UPID = &rep.UPID
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return s.WriteGCStatus(append(b, '\n'))
}

// pbsKeys are the counters every PBS .gc-status holds.
var pbsKeys = []string{"index-file-count", "index-data-bytes", "disk-bytes", "disk-chunks",
	"removed-bytes", "removed-chunks", "pending-bytes", "pending-chunks"}

// hasPBSKeys reports whether the JSON object b holds PBS's counters.
func hasPBSKeys(b []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	for _, k := range pbsKeys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}
