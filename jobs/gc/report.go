package gc

import "time"

// Report is what a GC did, saved in the store as .gc-status (the keys
// follow PBS's GarbageCollectionStatus where it has one).
type Report struct {
	UPID  string `json:"upid,omitempty"`
	State string `json:"state"` // running, ok, failed, cancelled
	Error string `json:"error,omitempty"`

	Started            time.Time  `json:"started"`
	Ended              time.Time  `json:"ended,omitzero"`
	AtimeCutoffSeconds float64    `json:"atime_cutoff_seconds"`
	Phase1Start        time.Time  `json:"phase1_start,omitzero"` // in the file system's clock
	OldestWriter       *time.Time `json:"oldest_writer,omitempty"`
	Cutoff             time.Time  `json:"cutoff,omitzero"` // chunks with an older atime are removed

	// Phase 1 (mark).
	IndexFileCount int64 `json:"index_file_count"`
	IndexDataBytes int64 `json:"index_data_bytes"`
	ChunkRefs      int64 `json:"chunk_refs"`     // index entries read
	ChunksTouched  int64 `json:"chunks_touched"` // utimensat calls (refs less the cache's hits)
	MissingChunks  int64 `json:"missing_chunks"` // referenced chunks not found (distinct as far as the cache tells)

	// Phase 2 (sweep).
	ChunkFiles     int64 `json:"chunk_files"` // files of the prefix directories looked at
	RemovedChunks  int64 `json:"removed_chunks"`
	RemovedBytes   int64 `json:"removed_bytes"`
	RemovedBad     int64 `json:"removed_bad"`
	StillBad       int64 `json:"still_bad"`
	RemovedTemp    int64 `json:"removed_temp"` // temporary files of dead writers, GC leftovers
	RestoredChunks int64 `json:"restored_chunks"`
	PendingChunks  int64 `json:"pending_chunks"` // older than phase 1's start, newer than the cutoff
	PendingBytes   int64 `json:"pending_bytes"`
	DiskChunks     int64 `json:"disk_chunks"` // kept
	DiskBytes      int64 `json:"disk_bytes"`
	TrashRemoved   int   `json:"trash_removed"` // leftovers of killed forgets

	DedupFactor   float64 `json:"dedup_factor"` // index_data_bytes / disk_bytes
	Phase1Seconds float64 `json:"phase1_seconds"`
	Phase2Seconds float64 `json:"phase2_seconds"`
}
