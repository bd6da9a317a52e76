package s3store

import (
	"context"
	"fmt"
	"iter"
	"sort"
	"strings"
	"sync"

	"github.com/cairnfs/cairn/store/objstore"
)

// The listing of the bucket's chunks (the sweep of a GC, WalkChunks), in
// key order, made of listings of key ranges run in parallel: a bucket
// answers one listing at a few thousand keys a second, page after page,
// but many at once.
//
// The first page is listed alone (listProbeKeys keys): a bucket that
// holds no more is listed in one request. Otherwise how far into the
// keys .chunks/0000/... to .chunks/ffff/... that page reached tells
// about how many chunks there are, and the rest is split into the
// ranges of the hex prefixes of one, two or three digits
// (.chunks/0, .chunks/00, .chunks/000: 16, 256 or 4096 of them), about
// listRangeKeys keys each. A prefix listing ends where its range does:
// no request reads past it. Keys under .chunks/ that begin with no
// lowercase hex digit are in no range and not listed: no chunk has such
// a key (parseChunkKey, chunkOfKey).
//
// listWorkers (8) list ranges at once, each into a buffer of its own of at
// most listRangeBuf keys (a full buffer stalls its listing, which the
// bucket client's page timeout allows: the caller's time between keys
// does not count); the consumer takes the ranges in order, and a range
// is started only within listWorkers ranges of the one it takes, so
// memory holds at most listWorkers·listRangeBuf keys. Each range's
// listing is checked as a whole listing is (objstore: keys in order,
// under its prefix); the concatenation is in key order by
// construction, and the sweep checks that order again (sweepJoin).

// Listing sizes.
//
// Each range costs a listing of its own, which a server such as MinIO
// probably starts by reading the whole .chunks/ directory: ranges are
// few (about listRangeKeys keys each) and a range fits its buffer.
const (
	listProbeKeys = 1000   // one page of S3's
	listRangeKeys = 10_000 // keys a range should hold, about
	listRangeBuf  = 10_000 // keys a range's listing may hold for the consumer
	listPage      = 500    // keys handed over at a time
)

// listWorkers is how many range listings run at once (a variable: tests
// bound the window with fewer).
var listWorkers = 8

// listChunkObjects yields the objects under .chunks/ in key order (see
// above). The first error ends it.
func listChunkObjects(ctx context.Context, b objstore.Objects) iter.Seq2[objstore.ObjectInfo, error] {
	return func(yield func(objstore.ObjectInfo, error) bool) {
		prefix := chunkDir + "/"
		var last string
		n := 0
		for info, err := range b.List(ctx, prefix, "") {
			if err != nil {
				yield(info, err)
				return
			}
			if n == listProbeKeys {
				break
			}
			if !yield(info, nil) {
				return
			}
			last, n = info.Key, n+1
		}
		if n < listProbeKeys {
			return
		}
		ranges := chunkRanges(last)
		if len(ranges) == 0 {
			// past the hex prefixes: what is left holds no chunk, and is
			// listed on as the caller asked
			for info, err := range b.List(ctx, prefix, last) {
				if !yield(info, err) || err != nil {
					return
				}
			}
			return
		}
		listRanges(ctx, b, ranges, yield)
	}
}

// keyRange is a listing of the keys under prefix after startAfter and,
// of those, the keys from from (inclusive) to to (exclusive; "" : no
// bound): a chunk range has no bounds beyond its prefix, a refresh's
// range of whole groups has both (meta_list.go).
type keyRange struct {
	prefix, startAfter string
	from, to           string
}

// chunkRanges splits the chunk keys after last (the probe's last key)
// into hex prefix ranges sized by the probe's reach.
func chunkRanges(last string) []keyRange {
	// the prefix directories at or before last: how far the probe reached
	rest := strings.TrimPrefix(last, chunkDir+"/")
	reach := sort.Search(1<<16, func(x int) bool { return hexOf(x, 4) > rest })
	estimate := listProbeKeys * (1 << 16) / max(reach, 1)
	digits := 1
	for digits < 3 && estimate/(1<<(4*digits)) > listRangeKeys {
		digits++
	}
	var out []keyRange
	for p := range 1 << (4 * digits) {
		pre := chunkDir + "/" + hexOf(p, digits)
		switch {
		case strings.HasPrefix(last, pre):
			out = append(out, keyRange{prefix: pre, startAfter: last})
		case pre > last:
			out = append(out, keyRange{prefix: pre})
		}
	}
	return out
}

// hexOf is p as digits lowercase hex digits.
func hexOf(p, digits int) string {
	const hex = "0123456789abcdef"
	b := make([]byte, digits)
	for i := digits - 1; i >= 0; i-- {
		b[i] = hex[p&15]
		p >>= 4
	}
	return string(b)
}

// rangePage is keys of a range handed to the consumer, or its error.
type rangePage struct {
	infos []objstore.ObjectInfo
	err   error
}

// listRanges lists ranges on listWorkers goroutines and yields their
// keys in the ranges' order.
func listRanges(ctx context.Context, b objstore.Objects, ranges []keyRange, yield func(objstore.ObjectInfo, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	outs := make([]chan rangePage, len(ranges))
	for i := range outs {
		outs[i] = make(chan rangePage, listRangeBuf/listPage)
	}
	done := make([]bool, len(ranges)) // set before outs[i] is closed
	// window holds a token per range started and not yet consumed
	window := make(chan struct{}, listWorkers)
	next := make(chan int)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(next)
		for i := range ranges {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range min(listWorkers, len(ranges)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				done[i] = listRange(ctx, b, ranges[i], outs[i])
				close(outs[i])
			}
		}()
	}
	for i := range ranges {
		for page := range outs[i] {
			if page.err == nil && ctx.Err() != nil {
				page.err = fmt.Errorf("list %s: %w", ranges[i].prefix, context.Cause(ctx))
			}
			if page.err != nil {
				yield(objstore.ObjectInfo{}, page.err)
				return
			}
			for _, info := range page.infos {
				if !yield(info, nil) {
					return
				}
			}
		}
		if !done[i] { // cut short by the context, which ends the listing
			yield(objstore.ObjectInfo{}, fmt.Errorf("list %s: %w", ranges[i].prefix, context.Cause(ctx)))
			return
		}
		<-window
	}
}

// listRange lists r into out, in pages; done tells that all of r was
// handed over (an error included).
func listRange(ctx context.Context, b objstore.Objects, r keyRange, out chan<- rangePage) (done bool) {
	send := func(p rangePage) bool {
		select {
		case out <- p:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var page []objstore.ObjectInfo
	for info, err := range b.List(ctx, r.prefix, r.startAfter) {
		if err != nil {
			return send(rangePage{err: err})
		}
		if info.Key < r.from {
			continue
		}
		if r.to != "" && info.Key >= r.to {
			break
		}
		info.ETag = "" // not needed: less to hold
		page = append(page, info)
		if len(page) == listPage {
			if !send(rangePage{infos: page}) {
				return false
			}
			page = nil
		}
	}
	return len(page) == 0 || send(rangePage{infos: page})
}
