package storesync

import (
	"context"
	"sync"
)

// The sync's pipeline: a snapshot's finish (its indexes, blobs and
// manifest written, each a request or more on a bucket, then its locks
// and leases released) overlaps the next snapshot's chunk uploads when
// that snapshot is another group's. Groups are taken in the plan's
// order, groupsInFlight at a time; a group's snapshots stay one after
// the other, oldest first (each a Backup that holds the group's lock
// and builds on the one before: its manifest is written last, after the
// previous one's). One snapshot at a time copies chunks (it holds
// uploading, from its start to its finish), so the chunk workers and
// their buffers stay those of one snapshot; the other group in flight
// is finishing one, or waits. Each snapshot is still a Backup of its
// own, with its manifest last: a sync cut short (an error, the
// context, kill -9) leaves unfinished snapshots at most.

// groupsInFlight bounds the groups a sync handles at once.
const groupsInFlight = 2

// syncGroups copies the plan's groups, groupsInFlight at a time, until
// ctx ends.
func (s *Syncer) syncGroups(ctx context.Context, plan []*groupPlan) {
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, groupsInFlight)
	for _, gp := range plan {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			s.syncGroup(ctx, gp)
		}()
	}
}

// startUploads waits for the snapshot's turn to copy chunks; release
// (safe to call more than once) ends it.
func (s *Syncer) startUploads(ctx context.Context) (release func(), err error) {
	select {
	case s.uploading <- struct{}{}:
	case <-ctx.Done():
		return func() {}, ctx.Err()
	}
	var once sync.Once
	return func() { once.Do(func() { <-s.uploading }) }, nil
}
