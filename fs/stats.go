package fs

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	Prefilled     int64 `json:"prefilled_files"`  // small files stored in the page cache before they were read
	ChunkErrors   int64 `json:"chunk_errors"`     // chunk loads that failed (missing, corrupt)
	ReadErrors    int64 `json:"read_errors"`      // read requests that failed with EIO
	TreeEntries   int64 `json:"tree_entries"`     // file archive entries the kernel has looked up and not forgotten
	CacheSize     int64 `json:"cache_size"`       // the cache's bound, bytes (--cache-size or its default)
	BuffersReused int64 `json:"buffers_reused"`   // chunk loads into a recycled buffer
	BuffersNew    int64 `json:"buffers_new"`      // chunk loads into a new buffer
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
		Prefilled:     f.prefill.filled.Load(),
		ChunkErrors:   c.Errors.Load(),
		ReadErrors:    f.readErrors.Load(),
		TreeEntries:   f.raw.count(),
		CacheSize:     f.cache.MaxBytes(),
		BuffersReused: c.BuffersReused.Load(),
		BuffersNew:    c.BuffersNew.Load(),
	}
}

// statsJSON is Stats as JSON of a fixed size: each number is padded to
// 20 columns (an int64 has at most 20 characters).
func (s Stats) statsJSON() []byte {
	v := reflect.ValueOf(s)
	b := []byte("{\n")
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		b = fmt.Appendf(b, "  %-20s %20d", strconv.Quote(name)+":", v.Field(i).Int())
		if i < v.NumField()-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return append(b, "}\n"...)
}

var statsSize = uint64(len(Stats{}.statsJSON()))

// statsFile is .stats: the counters at the moment of each read. Its
// content has one size whatever the counters, so every read, with or
// without a handle, gets one whole JSON document. Its attributes expire
// at once and carry the time of the stat as mtime: the kernel
// (auto_inval_data) then drops the page it cached and reads again.
type statsFile struct {
	node
}

var _ fileNode = (*statsFile)(nil)

func (n *statsFile) getattr(c *call, out *fuse.AttrOut) syscall.Errno {
	out.Attr = n.attr
	out.Size = statsSize
	now := time.Now()
	out.SetTimes(nil, &now, &now)
	out.SetTimeout(time.Nanosecond)
	return 0
}

// open (sent only when the mount is not in no-open mode) gives a handle
// with direct I/O, which bypasses the page cache.
func (n *statsFile) open(c *call, flags uint32) (fileHandle, uint32, syscall.Errno) {
	return n.fsys.openMode(c.ctx, flags, n.snapshot, fuse.FOPEN_DIRECT_IO)
}

// snapshot is a handle of the counters as they are now.
func (n *statsFile) snapshot(context.Context) (fileHandle, syscall.Errno) {
	return &bytesHandle{data: n.fsys.stats().statsJSON()}, 0
}

// read without a handle serves the current counters.
func (n *statsFile) read(c *call, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h, _ := n.snapshot(c.ctx)
	return h.Read(c.ctx, dest, off)
}
