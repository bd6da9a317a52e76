package s3store

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairnfs/cairn/store/objstore"
)

// A refresh lists a backup type or namespace directory (host/, ns/)
// in key ranges of whole groups (namespaces), a few at a time, and
// takes what they list in key order, as one listing of the directory
// would give it: a listing's page costs a round trip and, on MinIO,
// ~0.1 s of the server's time for 1,000 keys, and 10,000 snapshots are
// 20,000 keys or more. The ranges cover the directory's whole key
// space (a group made after the directory's own listing is in one of
// them), so what a refresh concludes from a key's absence is as it
// was with one listing. Memory: at most refreshListers ranges are
// listed at once, each at most listedAhead objects ahead of the
// refresh.

const (
	// refreshListers bounds the listings of one refresh in flight.
	refreshListers = 8
	// rangesPerLister is how many key ranges a directory is split into
	// per lister (their groups' sizes differ).
	rangesPerLister = 4
	// listedAhead bounds the objects a range's listing holds before the
	// refresh takes them.
	listedAhead = 2048
)

// keyRange is the keys of a directory from lo (inclusive; "": from the
// start) to hi (exclusive; "": to the end), both a group's prefix.
type keyRange struct{ lo, hi string }

// listed is one object of a range's listing, or its error.
type listed struct {
	obj objstore.ObjectInfo
	err error
}

// keyRanges splits the keys under top into ranges of whole
// subdirectories (its groups, or namespaces).
func (r *refresher) keyRanges(top string) ([]keyRange, error) {
	dirs, err := r.s.remote.bucket.ListDirs(r.ctx, top)
	if err != nil {
		return nil, err
	}
	per := max(1, (len(dirs)+refreshListers*rangesPerLister-1)/(refreshListers*rangesPerLister))
	var rs []keyRange
	lo := ""
	for i := per; i < len(dirs); i += per {
		rs = append(rs, keyRange{lo: lo, hi: dirs[i]})
		lo = dirs[i]
	}
	return append(rs, keyRange{lo: lo}), nil
}

// list takes every object under top, listed in key ranges.
func (r *refresher) list(top string) error {
	rs, err := r.keyRanges(top)
	if err != nil {
		return fmt.Errorf("refresh from bucket %s: list %s: %w", r.s.remote.cfg.Bucket, top, err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	out := make([]chan listed, len(rs))
	for i := range out {
		out[i] = make(chan listed, listedAhead)
	}
	slots := make(chan struct{}, refreshListers)
	go func() { // starts the ranges' listings in order, as slots free
		for i, kr := range rs {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go r.listRange(ctx, top, kr, out[i])
		}
	}()
	for i := range rs {
		if err := r.takeRange(ctx, top, out[i]); err != nil {
			return err
		}
		<-slots
	}
	return nil
}

// takeRange takes one range's objects as its listing yields them.
func (r *refresher) takeRange(ctx context.Context, top string, in <-chan listed) error {
	for {
		var it listed
		var ok bool
		select {
		case it, ok = <-in:
		case <-ctx.Done():
			return fmt.Errorf("refresh from bucket %s: list %s: %w", r.s.remote.cfg.Bucket, top, ctx.Err())
		}
		switch {
		case !ok:
			return nil
		case it.err != nil:
			return fmt.Errorf("refresh from bucket %s: list %s: %w", r.s.remote.cfg.Bucket, top, it.err)
		}
		if err := r.add(it.obj); err != nil {
			return err
		}
	}
}

// listRange lists the objects of range kr of top into out, which it
// closes.
func (r *refresher) listRange(ctx context.Context, top string, kr keyRange, out chan<- listed) {
	defer close(out)
	// every key from lo on sorts after lo without its final slash
	for obj, err := range r.s.remote.bucket.List(ctx, top, strings.TrimSuffix(kr.lo, "/")) {
		if err == nil && obj.Key < kr.lo {
			continue // a group whose name lo's is a prefix of, before lo
		}
		if err == nil && kr.hi != "" && obj.Key >= kr.hi {
			return
		}
		select {
		case out <- listed{obj, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}
