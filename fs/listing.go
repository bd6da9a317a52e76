package fs

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// listing is the model of a directory of the mount above the archives:
// its entries as a lister gives them, kept sorted by name and listed
// again when older than ttl (never, when ttl is 0: a snapshot's content
// does not change). A failed re-listing keeps the previous entries. It
// knows nothing of FUSE: the directory's node (dir.go) serves it and
// tells the kernel about the names a re-listing found gone, and
// listing_test.go tests it without a mount.
type listing struct {
	what string // for log lines: the path in the store
	list lister
	ttl  time.Duration
	log  *slog.Logger
	now  func() time.Time // time.Now; tests set their own clock

	mu      sync.Mutex
	loaded  bool
	at      time.Time
	changed time.Time // when a re-listing found other names than before
	entries []entry
}

// lister produces a directory's entries, in any order.
type lister func(ctx context.Context) ([]entry, error)

func newListing(what string, ttl time.Duration, list lister, log *slog.Logger) *listing {
	return &listing{what: what, list: list, ttl: ttl, log: log, now: time.Now}
}

// load returns the current entries, listing again when they are stale,
// and the names the previous entries had that are gone now or name
// another inode (a forgotten snapshot, a moved latest).
func (l *listing) load(ctx context.Context) (es []entry, gone []string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loaded && (l.ttl == 0 || l.now().Sub(l.at) < l.ttl) {
		return l.entries, nil, nil
	}
	es, err = l.list(ctx)
	if err != nil {
		if l.loaded {
			l.log.Warn("listing failed, showing the previous list", "dir", l.what, "err", err)
			return l.entries, nil, nil
		}
		return nil, nil, err
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	if l.loaded {
		gone = goneNames(l.entries, es)
		if !sameNames(l.entries, es) {
			l.changed = l.now()
		}
	}
	l.entries, l.loaded, l.at = es, true, l.now()
	return es, gone, nil
}

// fresh returns how long the entries stay valid (the whole ttl when not
// loaded yet) and when a re-listing last changed them (zero: never).
func (l *listing) fresh() (valid time.Duration, changed time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	valid = l.ttl
	if l.loaded {
		valid -= l.now().Sub(l.at)
	}
	return valid, l.changed
}

// isLoaded tells whether the entries were listed once.
func (l *listing) isLoaded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loaded
}

// goneNames returns the names of before (sorted) that now (sorted) lacks
// or has as another inode.
func goneNames(before, now []entry) []string {
	var gone []string
	for _, e := range before {
		if n, ok := find(now, e.name); !ok || n.attr.Ino != e.attr.Ino {
			gone = append(gone, e.name)
		}
	}
	return gone
}

// sameNames: a and b (sorted) list the same names, types and inode
// numbers, all a cached listing holds.
func sameNames(a, b []entry) bool {
	return slices.EqualFunc(a, b, func(x, y entry) bool {
		return x.name == y.name && x.attr.Ino == y.attr.Ino && x.attr.Mode&syscall.S_IFMT == y.attr.Mode&syscall.S_IFMT
	})
}

func find(es []entry, name string) (entry, bool) {
	i, ok := slices.BinarySearchFunc(es, name, func(e entry, n string) int { return strings.Compare(e.name, n) })
	if !ok {
		return entry{}, false
	}
	return es[i], true
}
