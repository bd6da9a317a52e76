package store

import (
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ListingIndex is the snapshot index as a mount uses it (safe for
// concurrent use): listings of plain snapshots (SnapListing), checked
// against the manifest exactly like the summaries of SnapIndex (same
// inode, size, mtime and ctime; made only of a settled manifest; a file
// that is not ours alone or does not decode is ignored and rebuilt).
// The file is read at the first listing, not at mount time; what the
// mount learns is written back now and then (Flush) and at Close, merged
// with what the file holds then.
type ListingIndex struct {
	s   *Store
	log *slog.Logger

	mu      sync.Mutex
	loaded  bool
	entries map[string]snapIndexEntry // the file's, and what this mount learned
	learned map[string]bool           // entries changed since the last write
	last    time.Time                 // of the last write
	writing bool
	wg      sync.WaitGroup
	flushMu sync.Mutex // one Flush at a time: each merges into the file
}

// listingFlushCount and listingFlushAge: a mount writes what it learned
// once this many entries changed or the oldest change is this old.
const (
	listingFlushCount = 2000
	listingFlushAge   = 10 * time.Second
)

// ManifestStamp identifies the version of a snapshot's manifest a
// listing was made of (zero: not known, nothing is cached).
// With group set (MountSnapshots: the group directory's settled state
// and the snapshot directory's d_ino) the index records where the
// manifest was found; trusted: the index vouched for it (no stat made).
type ManifestStamp struct {
	k       fileKey
	group   *groupDirKey
	dir     uint64
	trusted bool
}

// OpenListingIndex returns the store's index for a mount.
func (s *Store) OpenListingIndex(log *slog.Logger) *ListingIndex {
	if log == nil {
		log = s.log
	}
	return &ListingIndex{s: s, log: log, learned: map[string]bool{}, last: time.Now()}
}

func (x *ListingIndex) path() string { return filepath.Join(x.s.root, SnapIndexName) }

// load reads the file at first use (x.mu held).
func (x *ListingIndex) load() {
	if x.loaded {
		return
	}
	x.loaded = true
	x.entries = x.read()
}

// read returns the file's entries; none when it is missing or unusable.
func (x *ListingIndex) read() map[string]snapIndexEntry {
	es, err := readSnapIndex(x.path())
	switch {
	case err == nil:
		return es
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, fs.ErrPermission), errors.Is(err, errSnapIndexVersion):
		x.log.Debug("snapshot index not readable here", "file", x.path(), "err", err)
	default:
		x.log.Warn("snapshot index ignored; it is rebuilt", "file", x.path(), "err", err)
	}
	return map[string]snapIndexEntry{}
}

// Listing returns the cached listing of snap's manifest, if any, and the
// stamp to give Put* (zero when the manifest cannot be stat'ed:
// ReadManifest then says why). known is the stamp MountSnapshots gave:
// a trusted one is looked up with no stat; else the manifest is
// stat'ed, and an entry that matches records known's group state.
func (x *ListingIndex) Listing(snap Snapshot, known ManifestStamp) (*SnapListing, ManifestStamp) {
	if x == nil {
		return nil, ManifestStamp{}
	}
	key := snap.String()
	if known.trusted {
		x.mu.Lock()
		e, ok := x.entries[key]
		x.mu.Unlock()
		if ok && e.Manifest == known.k && e.Listing != nil {
			return e.Listing, known
		}
	}
	var st unix.Stat_t
	if fstatat(unix.AT_FDCWD, filepath.Join(x.s.SnapshotPath(snap), ManifestName), &st, 0) != nil {
		return nil, ManifestStamp{}
	}
	stamp := ManifestStamp{k: fileKeyOf(&st)}
	if stamp.k == known.k {
		stamp.group, stamp.dir = known.group, known.dir
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.load()
	e, ok := x.entries[key]
	if !ok || e.Manifest != stamp.k || e.Listing == nil {
		return nil, stamp
	}
	if g := stamp.group; g != nil && (e.Group == nil || *e.Group != *g || e.Dir != stamp.dir) {
		e.Group, e.Dir = g, stamp.dir
		x.entries[key] = e
		x.changed(key)
	}
	return e.Listing, stamp // never changed in place (clone on change)
}

// PutListing keeps l as the listing of snap's manifest m, read after the
// stat that made stamp, when that manifest has settled.
func (x *ListingIndex) PutListing(snap Snapshot, stamp ManifestStamp, m *Manifest, l SnapListing) {
	if x == nil || stamp.k == (fileKey{}) || stamp.k.Ctime >= time.Now().Add(-snapIndexSettle).UnixNano() || l.check() != nil {
		return
	}
	key := snap.String()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.load()
	e, ok := x.entries[key]
	if ok && e.Manifest.Ctime > stamp.k.Ctime {
		return // of a newer version of the manifest
	}
	if !ok || e.Manifest != stamp.k {
		sum, err := SummarizeManifest(m)
		if err != nil {
			return
		}
		listedBlobSizes(m, &l, &sum)
		if !ok && len(x.entries) >= maxSnapIndexEntries {
			return
		}
		e = snapIndexEntry{Manifest: stamp.k, Summary: sum}
	}
	e.Listing = l.clone()
	e.Group, e.Dir = stamp.group, stamp.dir
	x.entries[key] = e
	x.changed(key)
}

// PutRoot keeps the root attributes of file archive name of snap, whose
// listing the index has for the manifest stamp identifies.
func (x *ListingIndex) PutRoot(snap Snapshot, stamp ManifestStamp, name string, root RootAttr) {
	x.putArchive(snap, stamp, name, func(a *ListedArchive) { a.Root = &root })
}

// PutData keeps the bytes of data (outside all-zero chunks) of image
// name of snap, as PutRoot.
func (x *ListingIndex) PutData(snap Snapshot, stamp ManifestStamp, name string, data uint64) {
	x.putArchive(snap, stamp, name, func(a *ListedArchive) { a.Data = &data })
}

// putArchive changes archive name of snap's listing with set, if the
// index has it for the manifest stamp identifies and it stays valid.
func (x *ListingIndex) putArchive(snap Snapshot, stamp ManifestStamp, name string, set func(*ListedArchive)) {
	if x == nil || stamp.k == (fileKey{}) {
		return
	}
	key := snap.String()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.load()
	e, ok := x.entries[key]
	if !ok || e.Manifest != stamp.k || e.Listing == nil {
		return
	}
	l := e.Listing.clone()
	for i := range l.Archives {
		if a := &l.Archives[i]; a.Name == name {
			set(a)
			if a.check() != nil {
				return
			}
			e.Listing = l
			x.entries[key] = e
			x.changed(key)
			return
		}
	}
}

// changed notes a change and starts a write when enough accumulated
// (x.mu held).
func (x *ListingIndex) changed(key string) {
	x.learned[key] = true
	if x.writing || (len(x.learned) < listingFlushCount && time.Since(x.last) < listingFlushAge) {
		return
	}
	x.writing = true
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		x.Flush()
	}()
}

// Flush writes what this mount learned, merged into the file as it is
// now (another process may have written it since it was read).
func (x *ListingIndex) Flush() {
	if x == nil {
		return
	}
	x.flushMu.Lock()
	defer x.flushMu.Unlock()
	x.mu.Lock()
	mine := make(map[string]snapIndexEntry, len(x.learned))
	for k := range x.learned {
		mine[k] = x.entries[k]
	}
	clear(x.learned)
	x.last = time.Now()
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		x.writing = false
		x.mu.Unlock()
	}()
	if len(mine) == 0 {
		return
	}
	es := x.read()
	for k, e := range mine {
		if _, ok := es[k]; ok || len(es) < maxSnapIndexEntries {
			es[k] = e
		}
	}
	if err := writeSnapIndex(x.s.root, es); err != nil {
		x.log.Debug("snapshot index not written", "file", x.path(), "err", err)
	}
}

// Close waits for a write under way and writes what is left.
func (x *ListingIndex) Close() {
	if x == nil {
		return
	}
	x.wg.Wait()
	x.Flush()
}
