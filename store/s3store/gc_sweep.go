package s3store

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/digestsort"
	"github.com/cairnfs/cairn/store/objstore"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sync/errgroup"
)

// gcDeleteBatch is how many keys one delete request of the sweep names
// (S3's DeleteObjects takes up to 1000).
const gcDeleteBatch = 1000

// gcBeforeDelete, if set, runs before each delete request (tests: a
// writer touching a listed chunk just then).
var gcBeforeDelete func(keys []string)

// gcDeleteQueue is how many batches wait for the deleter while the
// listing goes on.
const gcDeleteQueue = 2

// gcBatch is keys to delete and what they count for.
type gcBatch struct {
	keys  []string
	size  []int64
	isBad []bool
}

// Sweep implements ChunkCollector (step 4 of the remote GC): the
// bucket's chunk listing, in key order (listed in parallel key ranges:
// chunks_list.go), is merge-joined with the marked
// set; unmarked chunks older than the cutoff are deleted in batches by a
// second goroutine while the listing goes on.
func (c *remoteCollector) Sweep(ctx context.Context, opt store.SweepOptions) (store.SweepCounts, error) {
	var n, removed store.SweepCounts
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan gcBatch, gcDeleteQueue)
	g.Go(func() error {
		for b := range batches {
			if err := c.deleteGCBatch(gctx, b, &removed); err != nil {
				return err
			}
		}
		return nil
	})
	g.Go(func() error {
		defer close(batches)
		return c.sweepList(gctx, opt, batches, &n)
	})
	err := g.Wait()
	n.Add(removed)
	return n, err
}

// sweepList lists the chunks and decides each.
func (c *remoteCollector) sweepList(ctx context.Context, opt store.SweepOptions, batches chan<- gcBatch, n *store.SweepCounts) error {
	j := sweepJoin{c: c, opt: opt, n: n}
	if err := j.nextMarked(); err != nil {
		return err
	}
	var b gcBatch
	send := func() error {
		if len(b.keys) == 0 {
			return nil
		}
		select {
		case batches <- b:
			b = gcBatch{}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for obj, err := range listChunkObjects(ctx, c.b) {
		if err != nil {
			return fmt.Errorf("list the bucket's chunks: %w", err)
		}
		d, bad, ok := parseChunkKey(obj.Key)
		if !ok {
			continue // not a chunk's key: never removed
		}
		if err := j.advance(d); err != nil {
			return err
		}
		if !j.decide(d, bad, obj.Size, obj.LastModified) {
			continue
		}
		b.keys, b.size, b.isBad = append(b.keys, obj.Key), append(b.size, obj.Size), append(b.isBad, bad)
		if len(b.keys) >= gcDeleteBatch {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if err := j.finish(); err != nil {
		return err
	}
	return send()
}

// sweepJoin walks the marked set beside the listing.
type sweepJoin struct {
	c        *remoteCollector
	opt      store.SweepOptions
	n        *store.SweepCounts
	m        chunk.Digest // the next marked digest, when has
	has      bool
	lastGood chunk.Digest // the last chunk (not .bad) listed
	seenGood bool
	prefix   int          // prefix directories passed, for progress
	prev     chunk.Digest // the last digest listed
	listed   bool
}

func (j *sweepJoin) nextMarked() error {
	var err error
	j.m, j.has, err = j.c.marked.Next()
	return err
}

// advance passes the marked digests below d: those with no chunk
// listed are missing. A listing out of key order stops the sweep: the
// join would take a marked chunk listed late for garbage.
func (j *sweepJoin) advance(d chunk.Digest) error {
	if j.listed && digestsort.Compare(d, j.prev) < 0 {
		return fmt.Errorf("the bucket listed chunk %s after %s: not in key order; nothing more is deleted", d, j.prev)
	}
	j.prev, j.listed = d, true
	j.progress(int(d[0])<<8 | int(d[1]))
	for j.has && digestsort.Compare(j.m, d) < 0 {
		if !j.seenGood || j.lastGood != j.m {
			j.missing(j.m)
		}
		if err := j.nextMarked(); err != nil {
			return err
		}
	}
	return nil
}

func (j *sweepJoin) missing(d chunk.Digest) {
	j.n.MissingChunks++
	if j.opt.Missing != nil {
		j.opt.Missing(d)
	}
}

func (j *sweepJoin) progress(prefix int) {
	if prefix > j.prefix {
		if j.opt.Done != nil {
			j.opt.Done(prefix - j.prefix)
		}
		j.prefix = prefix
	}
}

// finish passes the marked digests after the last chunk listed.
func (j *sweepJoin) finish() error {
	for j.has {
		if !j.seenGood || j.lastGood != j.m {
			j.missing(j.m)
		}
		if err := j.nextMarked(); err != nil {
			return err
		}
	}
	j.progress(store.PrefixDirs)
	return nil
}

// decide counts the object of chunk d (a .bad copy when bad) and tells
// whether it is to be deleted: a chunk not marked and older than the
// cutoff; a .bad copy older than the cutoff unless its chunk is marked
// and missing (as the local GC keeps .bad copies of a missing chunk).
func (j *sweepJoin) decide(d chunk.Digest, bad bool, size int64, modified time.Time) bool {
	j.n.Files++
	marked := j.has && j.m == d
	if !bad {
		j.lastGood, j.seenGood = d, true
	}
	cut, phase1 := j.c.start.Cutoff, j.c.start.Phase1
	switch {
	case bad && marked && (!j.seenGood || j.lastGood != d):
		j.n.Keep(true, size, phase1, phase1) // the only copy a referenced chunk has
		return false
	case marked && !bad:
		j.n.Keep(false, size, phase1, phase1)
		return false
	case !modified.Before(cut):
		j.n.Keep(bad, size, modified, phase1)
		return false
	}
	return true
}

// deleteGCBatch deletes one batch while the lease is held, within
// gcLeaseTTL/4, in one attempt, and counts it removed.
func (c *remoteCollector) deleteGCBatch(ctx context.Context, b gcBatch, n *store.SweepCounts) error {
	if gcBeforeDelete != nil {
		gcBeforeDelete(b.keys)
	}
	if err := c.lost(); err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, gcLeaseTTL/4)
	defer cancel()
	// never retried: a retry whose first attempt landed could delete a
	// chunk a writer created again in between (gc_record.go)
	if err := objstore.LimitRetries(c.b, 0).Delete(dctx, b.keys...); err != nil {
		return fmt.Errorf("delete %d chunks from the bucket: %w", len(b.keys), err)
	}
	for i := range b.keys {
		if b.isBad[i] {
			n.RemovedBad++
		} else {
			n.RemovedChunks++
		}
		n.RemovedBytes += b.size[i]
	}
	return nil
}
