package fs

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
)

// Defaults of Options.
const (
	DefaultRefresh      = 2 * time.Second
	DefaultStoreRefresh = 30 * time.Second
	DefaultTimeout      = time.Hour
	DefaultReadAheadKB  = 4096
	DefaultUnmountGrace = 10 * time.Second
	DefaultImageMode    = 0o400   // images and blobs: the mounting user only
	DefaultStatusMode   = 0o400   // .stats, .jobs/status and .jobs/*/{status,log}: the mounting user only
	maxRequest          = 1 << 20 // MaxWrite: 1 MiB read requests
)

// Scope is the part of a store a mount shows: a namespace and everything
// below it (the default: the root namespace), one group, or one snapshot.
type Scope struct {
	NS       store.NS
	Group    *store.Group    // only this group (its NS wins over NS)
	Snapshot *store.Snapshot // only this finished snapshot
}

// RootEntry is an extra node at the root of the mount supplied by the
// caller, such as the .jobs control tree (JobsEntry). New is called once,
// when the root is built; the node lives as long as the mount.
type RootEntry struct {
	Name string
	Mode uint32 // file type bits, e.g. syscall.S_IFDIR
	New  func() Node
}

// Options configure a mount.
type Options struct {
	Store *store.Store // required
	Scope Scope

	CacheSize int64 // bytes of decoded chunks (default chunkcache.DefaultSize)
	// Readahead is the chunks loaded ahead per sequential handle (0:
	// default, <0: none); at most MaxReadahead(CacheSize).
	Readahead int

	// ImageMode is the permission bits of images and blobs, which are
	// shown owned by the mounting user: read bits only (a subset of
	// 0444); 0 means DefaultImageMode.
	ImageMode uint32
	// StatusMode is the permission bits of .stats and of the status and
	// log files of .jobs (JobsEntry takes it too): they name snapshots,
	// paths and errors, so by default only the mounting user (and root)
	// reads them, also under AllowOther. Read bits only; 0 means
	// DefaultStatusMode.
	StatusMode uint32
	NonEmpty   bool // mount over a directory that is not empty (fusermount's nonempty)

	Refresh      time.Duration // how stale a namespace/group list may be (default 2 s)
	StoreRefresh time.Duration // how often the store refreshes what it keeps of snapshots from elsewhere (Store.Refresh: a remote store's mirror; default 30 s)
	Timeout      time.Duration // kernel entry and attribute timeout (default 1 h); entries of the changing listings (namespaces, groups, snapshots, latest) last at most Refresh
	ReadAheadKB  int           // the mount's read_ahead_kb in /sys/class/bdi (default 4096, <0: leave)
	UnmountGrace time.Duration // how long Unmount waits for open files before aborting (default 10 s)

	AllowOther bool // let other users see the mount (needs user_allow_other for non-root)
	// OneMount serves the extra entries inside the store's mount, which is
	// then read-write and sends an OPEN per file (submount.go). It is
	// always so without root.
	OneMount bool
	Debug    bool // log every FUSE request (go-fuse debug output)

	Trees TreeOpener   // shows file archives as trees (PxarTrees); nil: they are left out
	Extra []RootEntry  // extra root entries (e.g. .jobs)
	Log   *slog.Logger // nil: the store's (store.Store.Logger)
}

func (o *Options) setDefaults() error {
	if o.Store == nil {
		return fmt.Errorf("mount: %w: no store", errBadOptions)
	}
	if o.CacheSize <= 0 {
		o.CacheSize = chunkcache.DefaultSize
	}
	switch {
	case o.Readahead == 0: // the store's default, shrunk to fit a small cache
		o.Readahead = min(o.Store.Readahead(), MaxReadahead(o.CacheSize))
	case o.Readahead < 0:
		o.Readahead = 0
	}
	if m := MaxReadahead(o.CacheSize); o.Readahead > m {
		return fmt.Errorf("mount: %w: read-ahead of %d chunks: at most %d fit in half of a %d MiB cache", errBadOptions, o.Readahead, m, o.CacheSize>>20)
	}
	if o.ImageMode == 0 {
		o.ImageMode = DefaultImageMode
	}
	if err := CheckImageMode(o.ImageMode); err != nil {
		return fmt.Errorf("mount: %w: image %w", errBadOptions, err)
	}
	if o.StatusMode == 0 {
		o.StatusMode = DefaultStatusMode
	}
	if err := CheckImageMode(o.StatusMode); err != nil {
		return fmt.Errorf("mount: %w: status %w", errBadOptions, err)
	}
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.StoreRefresh <= 0 {
		o.StoreRefresh = DefaultStoreRefresh
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ReadAheadKB == 0 {
		o.ReadAheadKB = DefaultReadAheadKB
	}
	if o.UnmountGrace <= 0 {
		o.UnmountGrace = DefaultUnmountGrace
	}
	if o.Log == nil {
		o.Log = o.Store.Logger()
	}
	for _, e := range o.Extra {
		if e.Name == "" || e.Name == statsName || e.New == nil {
			return fmt.Errorf("mount: %w: root entry %q", errBadOptions, e.Name)
		}
	}
	return o.Scope.check(o.Store)
}

// MaxReadahead is the largest read-ahead (in chunks) a cache of
// cacheSize bytes takes: the chunks one sequential reader loads ahead, at
// PBS's 4 MiB each, must fit in half of the cache, so that read-ahead can
// neither grow memory past the cache nor evict what it loaded before it
// is read.
func MaxReadahead(cacheSize int64) int {
	return int(cacheSize / 2 / chunk.DefaultChunkSize)
}

// CheckImageMode accepts the permission bits images and blobs (and the
// status files: Options.StatusMode) may have: read bits only (the mount
// is read-only; nothing there is a program).
func CheckImageMode(mode uint32) error {
	if mode == 0 || mode&^0o444 != 0 {
		return fmt.Errorf("mode %#o: want read bits only, such as 0400, 0440 or 0444", mode)
	}
	return nil
}

// check validates the scope against the store.
func (sc Scope) check(s *store.Store) error {
	switch {
	case sc.Snapshot != nil:
		if _, err := s.Resolve(store.Ref{Snapshot: *sc.Snapshot}); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
	case sc.Group != nil:
		if err := sc.Group.Check(); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
		if _, err := s.Snapshots(*sc.Group); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
	default:
		if err := sc.NS.Check(); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
		if !s.HasNamespace(sc.NS) {
			return fmt.Errorf("mount: namespace %q: %w", sc.NS, store.ErrNotFound)
		}
	}
	return nil
}
