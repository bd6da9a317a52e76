package store

import (
	"time"

	"github.com/cairnfs/cairn/store/objstore"
)

// What the external tests of the remote metadata (remote_meta_test.go)
// reach inside a store for.

// SetLeaseTTL sets the TTL of the leases s takes from now on.
func SetLeaseTTL(s *Store, ttl time.Duration) {
	s.remote.leases.mu.Lock()
	s.remote.leases.ttl = ttl
	s.remote.leases.mu.Unlock()
}

// BucketOf is the bucket of a remote store.
func BucketOf(s *Store) objstore.Objects { return s.remote.bucket }

// WriterLeaseLost is the Lost channel of the backup's writer lease.
func WriterLeaseLost(b *Backup) <-chan struct{} { return b.writer.lease.Lost() }

// WriterLeaseKey is the key of the backup's writer lease.
func WriterLeaseKey(b *Backup) string { return b.writer.lease.Key() }

// SetNameBaseHook sets a function run as a backup is about to name its
// base in its lease (nil: none).
func SetNameBaseHook(f func(*Backup, Snapshot)) { testHookNameBase = f }
