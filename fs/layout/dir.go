package layout

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Dir is the model of a directory of the layout: its entries as a lister
// gives them, kept sorted by name and listed again when older than its
// ttl (never, when ttl is 0: a snapshot's content does not change). A
// failed re-listing keeps the previous entries. It knows nothing of
// FUSE: the mount's node serves it and tells the kernel about the names a
// re-listing found gone.
type Dir struct {
	path  string // for log lines: the path in the store
	list  Lister
	ttl   time.Duration
	log   *slog.Logger
	extra []Entry          // added to every listing (Add)
	now   func() time.Time // time.Now; tests set their own clock

	mu      sync.Mutex
	loaded  bool
	at      time.Time
	changed time.Time // when a re-listing found other names than before
	entries []Entry
}

// Lister produces a directory's entries, in any order.
type Lister func(ctx context.Context) ([]Entry, error)

// NewDir returns the model of a directory at path (in the store, for log
// lines) listed by list, listed again when older than ttl (0: never).
func NewDir(path string, ttl time.Duration, list Lister, log *slog.Logger) *Dir {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Dir{path: path, list: list, ttl: ttl, log: log, now: time.Now}
}

// Path is the directory's path in the store, as log lines name it.
func (d *Dir) Path() string { return d.path }

// TTL is how long a listing is good for; 0: for ever.
func (d *Dir) TTL() time.Duration { return d.ttl }

// Add adds entries to every listing (the mount's own entries at its
// root). It is called before the first Load.
func (d *Dir) Add(es ...Entry) { d.extra = append(d.extra, es...) }

// Load returns the current entries, listing again when they are stale,
// and the names the previous entries had that are gone now or name
// another inode (a forgotten snapshot, a moved latest).
func (d *Dir) Load(ctx context.Context) (es []Entry, gone []string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loaded && (d.ttl == 0 || d.now().Sub(d.at) < d.ttl) {
		return d.entries, nil, nil
	}
	es, err = d.list(ctx)
	if err != nil {
		if d.loaded {
			d.log.Warn("listing failed, showing the previous list", "dir", d.path, "err", err)
			return d.entries, nil, nil
		}
		return nil, nil, err
	}
	es = append(es, d.extra...)
	slices.SortFunc(es, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	if d.loaded {
		gone = goneNames(d.entries, es)
		if !sameNames(d.entries, es) {
			d.changed = d.now()
		}
	}
	d.entries, d.loaded, d.at = es, true, d.now()
	return es, gone, nil
}

// Fresh returns how long the entries stay valid (the whole ttl when not
// loaded yet) and when a re-listing last changed them (zero: never).
func (d *Dir) Fresh() (valid time.Duration, changed time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	valid = d.ttl
	if d.loaded {
		valid -= d.now().Sub(d.at)
	}
	return valid, d.changed
}

// Loaded tells whether the entries were listed once.
func (d *Dir) Loaded() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loaded
}

// goneNames returns the names of before (sorted) that now (sorted) lacks
// or has as another inode.
func goneNames(before, now []Entry) []string {
	var gone []string
	for _, e := range before {
		if n, ok := Find(now, e.Name); !ok || n.Ino != e.Ino {
			gone = append(gone, e.Name)
		}
	}
	return gone
}

// sameNames: a and b (sorted) list the same names, types and inode
// numbers, all a cached listing holds.
func sameNames(a, b []Entry) bool {
	return slices.EqualFunc(a, b, func(x, y Entry) bool {
		return x.Name == y.Name && x.Ino == y.Ino && x.Mode&syscall.S_IFMT == y.Mode&syscall.S_IFMT
	})
}

// Find returns the entry called name of es, a listing (sorted) Load
// returned.
func Find(es []Entry, name string) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(es, name, func(e Entry, n string) int { return strings.Compare(e.Name, n) })
	if !ok {
		return Entry{}, false
	}
	return es[i], true
}
