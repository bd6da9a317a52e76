package s3store

import (
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
)

// What the external tests (meta_test.go, leases_test.go, gc_test.go)
// reach inside a store for.

// SetLeaseTTL sets the TTL of the leases s takes from now on.
func SetLeaseTTL(s *store.Store, ttl time.Duration) {
	r := of(s).remote
	r.leases.mu.Lock()
	r.leases.ttl = ttl
	r.leases.mu.Unlock()
}

// BucketOf is the bucket of a remote store.
func BucketOf(s *store.Store) objstore.Objects { return of(s).remote.bucket }

// WriterLeaseLost is the Lost channel of the backup's writer lease.
func WriterLeaseLost(b *store.Backup) <-chan struct{} { return b.WriterLease().Lost() }

// WriterLeaseKey is the key of the backup's writer lease.
func WriterLeaseKey(b *store.Backup) string { return b.WriterLease().Key() }

// SetNameBaseHook sets a function run as a backup is about to name its
// base in its lease (nil: none).
func SetNameBaseHook(f func(*store.Backup, store.Snapshot)) { testHookNameBase = f }

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
func GCLeaseLost(c store.ChunkCollector) <-chan struct{} { return c.(*remoteCollector).lease.Lost() }

// GCLeaseKey is the GC lease's key in a remote store's bucket.
const GCLeaseKey = gcLeaseKey

// GCLeaseTTL is the GC lease's time to live.
const GCLeaseTTL = gcLeaseTTL

// ListChunkObjects is the GC's parallel listing of the chunks.
var ListChunkObjects = listChunkObjects
