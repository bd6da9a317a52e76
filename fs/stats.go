package fs

import (
	"context"
	"encoding/json"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// statsName is the root file that shows Stats as JSON.
const statsName = ".stats"

// Stats are a mount's counters since it was mounted.
type Stats struct {
	CacheHits     int64 `json:"cache_hits"`       // chunks found in the cache
	CacheMisses   int64 `json:"cache_misses"`     // chunks not in the cache
	LoadedBytes   int64 `json:"loaded_bytes"`     // chunk file bytes read from the store
	DecodedBytes  int64 `json:"decoded_bytes"`    // plain bytes those chunks decoded to
	ServedBytes   int64 `json:"served_bytes"`     // bytes returned to readers
	ZeroHits      int64 `json:"zero_hits"`        // all-zero chunks served without I/O
	Collapsed     int64 `json:"collapsed_misses"` // misses that joined a load in flight
	PrefetchLoads int64 `json:"prefetch_loads"`   // chunks loaded ahead of sequential readers
	ChunkErrors   int64 `json:"chunk_errors"`     // chunk loads that failed (missing, corrupt)
	ReadErrors    int64 `json:"read_errors"`      // read requests that failed with EIO
}

// stats collects the counters.
func (f *mountFS) stats() Stats {
	c := &f.cache.Stats
	return Stats{
		CacheHits:     c.Hits.Load(),
		CacheMisses:   c.Misses.Load(),
		LoadedBytes:   c.LoadedBytes.Load(),
		DecodedBytes:  c.DecodedBytes.Load(),
		ServedBytes:   f.served.Load(),
		ZeroHits:      c.ZeroHits.Load(),
		Collapsed:     c.Collapsed.Load(),
		PrefetchLoads: c.PrefetchLoads.Load(),
		ChunkErrors:   c.Errors.Load(),
		ReadErrors:    f.readErrors.Load(),
	}
}

// statsFile is .stats: each open sees the counters of that moment. It is
// opened with direct I/O, so its size (0) does not limit reads and the
// kernel keeps no stale pages.
type statsFile struct {
	node
	readOnly
}

var _ gofs.NodeOpener = (*statsFile)(nil)

func (n *statsFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if e := openFlagsOK(flags); e != 0 {
		return nil, 0, e
	}
	data, err := json.MarshalIndent(n.fsys.stats(), "", "  ")
	if err != nil {
		return nil, 0, syscall.EIO
	}
	return &bytesHandle{data: append(data, '\n')}, fuse.FOPEN_DIRECT_IO, 0
}
