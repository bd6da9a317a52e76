package store

import "encoding/json"

// ChunkUploadStats is what a backup did with its chunks, recorded in the
// manifest's unprotected section under chunk_upload_stats, with PBS's
// field names (PBS's server writes it when a backup finishes). In cairn
// every chunk of the backup is counted (a backup writes to the store
// directly, so none is skipped unsent): Count chunks of Size plain bytes,
// of which Duplicates were in the store already; CompressedSize is the
// size on disk of the chunks stored anew (PBS's also counts the
// duplicates it was sent), so that the sum over a group's snapshots is
// what they added to the store.
type ChunkUploadStats struct {
	Count          int64 `json:"count"`
	Size           int64 `json:"size"`
	CompressedSize int64 `json:"compressed_size"`
	Duplicates     int64 `json:"duplicates"`
}

const chunkUploadStatsKey = "chunk_upload_stats"

// ChunkUploadStatsOf turns an upload's totals into the manifest's record.
func ChunkUploadStatsOf(t UploadTotals) ChunkUploadStats {
	return ChunkUploadStats{Count: t.Chunks, Size: t.Bytes, CompressedSize: t.NewStored, Duplicates: t.Chunks - t.NewChunks}
}

// SetChunkUploadStats makes Finish record st in the manifest.
func (b *Backup) SetChunkUploadStats(st ChunkUploadStats) { b.stats = &st }

// ChunkUploadStats returns the recorded upload statistics, if any (a
// snapshot written by an older cairn has none).
func (m *Manifest) ChunkUploadStats() (ChunkUploadStats, bool) {
	var st ChunkUploadStats
	raw, ok := m.Unprotected[chunkUploadStatsKey]
	if !ok || json.Unmarshal(raw, &st) != nil || st.CompressedSize < 0 || st.Size < 0 {
		return ChunkUploadStats{}, false
	}
	return st, true
}

// SetChunkUploadStats records st.
func (m *Manifest) SetChunkUploadStats(st ChunkUploadStats) {
	raw, _ := json.Marshal(st) // a struct of integers always marshals
	if m.Unprotected == nil {
		m.Unprotected = map[string]json.RawMessage{}
	}
	m.Unprotected[chunkUploadStatsKey] = raw
}
