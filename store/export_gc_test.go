package store

import "time"

// SetGCBeforeDelete sets the hook the remote GC's sweep runs before each
// delete request (nil: none).
func SetGCBeforeDelete(f func(keys []string)) { gcBeforeDelete = f }

// ChunkKey is chunk d's key in a remote store's bucket.
var ChunkKey = chunkKey

// SetSweepPoll sets how often a writer waiting for a sweep reads the GC
// lease until restore is called.
func SetSweepPoll(d time.Duration) (restore func()) {
	old := sweepPoll
	sweepPoll = d
	return func() { sweepPoll = old }
}

// GCLeaseLost is the Lost channel of a remote collector's GC lease
// (taken by Begin).
func GCLeaseLost(c ChunkCollector) <-chan struct{} { return c.(*remoteCollector).lease.Lost() }

// GCLeaseKey is the GC lease's key in a remote store's bucket.
const GCLeaseKey = gcLeaseKey

// GCLeaseTTL is the GC lease's time to live.
const GCLeaseTTL = gcLeaseTTL
