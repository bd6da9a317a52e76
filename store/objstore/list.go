package objstore

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
)

// maxDirs bounds what ListDirs collects.
const maxDirs = 1 << 20

// List yields every object under prefix, in key order, after startAfter
// (keys relative to the configured prefix). A failed page is retried
// (Options.Retries, counted since the last key yielded) from the last
// key yielded; each page's request is bounded by Options.Timeout (the
// time the caller spends between keys does not count). A key outside
// the configured prefix (a server that ignores it) ends the listing
// with an error.
func (b *Bucket) List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		after := startAfter
		for attempt := 1; ; attempt++ {
			progressed, stopped, err := b.listOnce(ctx, prefix, &after, yield)
			if stopped || err == nil {
				return
			}
			if progressed {
				attempt = 1
			}
			if ctx.Err() != nil || !retryable(err) || attempt > b.opt.Retries || (unreachable(err) && !b.clock.answered.Load()) {
				if ctx.Err() != nil {
					err = joinErr(ctx.Err(), err)
				}
				yield(ObjectInfo{}, b.wrap("list", prefix, err, attempt))
				return
			}
			if werr := b.backoff(ctx, "list", prefix, attempt, err); werr != nil {
				yield(ObjectInfo{}, b.wrap("list", prefix, joinErr(werr, err), attempt))
				return
			}
		}
	}
}

// listOnce lists from *after until the end, an error, or the caller
// stops (stopped), moving *after along.
func (b *Bucket) listOnce(ctx context.Context, prefix string, after *string,
	yield func(ObjectInfo, error) bool) (progressed, stopped bool, err error) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	timer := time.AfterFunc(b.timeoutFor(0), func() { timedOut.Store(true); cancel() })
	defer timer.Stop()
	opts := minio.ListObjectsOptions{Prefix: b.listPrefix(prefix), Recursive: true, FetchOwner: new(false)}
	if *after != "" {
		opts.StartAfter = b.full(*after)
	}
	for oi := range b.client.ListObjectsIter(actx, b.cfg.Bucket, opts) {
		if oi.Err != nil {
			if timedOut.Load() {
				return progressed, false, joinErr(errAttemptTimeout, oi.Err)
			}
			return progressed, false, oi.Err
		}
		key, ok := b.rel(oi.Key)
		if !ok || !strings.HasPrefix(key, prefix) || key <= *after {
			return progressed, false, fmt.Errorf("listing returned key %q out of order or outside %q", oi.Key, opts.Prefix)
		}
		timer.Stop()
		if !yield(b.info(key, oi), nil) {
			return true, true, nil
		}
		*after, progressed = key, true
		timer.Reset(b.timeoutFor(0))
	}
	if ctx.Err() != nil {
		return progressed, false, ctx.Err()
	}
	if timedOut.Load() {
		return progressed, false, errAttemptTimeout
	}
	return progressed, false, nil
}

// listPrefix is the bucket prefix of a relative one.
func (b *Bucket) listPrefix(prefix string) string {
	if b.cfg.Prefix == "" {
		return prefix
	}
	return b.cfg.Prefix + "/" + prefix
}

// ListDirs lists the "directories" (common prefixes, ending in /) right
// under prefix (which ends in / or is ""), relative to the configured
// prefix, sorted.
func (b *Bucket) ListDirs(ctx context.Context, prefix string) ([]string, error) {
	var dirs []string
	err := b.do(ctx, "list", prefix, func(ctx context.Context) error {
		dirs = dirs[:0]
		opts := minio.ListObjectsOptions{Prefix: b.listPrefix(prefix), FetchOwner: new(false)}
		for oi := range b.client.ListObjectsIter(ctx, b.cfg.Bucket, opts) {
			if oi.Err != nil {
				return oi.Err
			}
			if !strings.HasSuffix(oi.Key, "/") {
				continue // an object right under prefix
			}
			key, ok := b.rel(oi.Key)
			if !ok || !strings.HasPrefix(key, prefix) {
				return fmt.Errorf("listing returned %q outside %q", oi.Key, opts.Prefix)
			}
			if len(dirs) >= maxDirs {
				return fmt.Errorf("more than %d directories", maxDirs)
			}
			dirs = append(dirs, key)
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(dirs)
	return slices.Compact(dirs), nil
}
