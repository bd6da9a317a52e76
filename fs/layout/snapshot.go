package layout

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cairnfs/cairn/store"
)

// snapshotLister lists a finished snapshot's archives: images (and other
// single-index archives) as files of their data size, blobs as files of
// their decoded size, file archives as trees when Layout.Trees and left
// out (with a log line) otherwise. The listing of a plain snapshot comes
// from the snapshot index while its manifest is the one it was made of
// (store.ListingIndex), with no stat at all when the group's listing
// vouched for it (known); else from the manifest, and the index keeps it.
// Either way the archives read the manifest again before any data
// (Manifest).
func (l *Layout) snapshotLister(snap store.Snapshot, known store.ManifestStamp) Lister {
	return func(ctx context.Context) ([]Entry, error) {
		sl, stamp := l.Index.Listing(snap, known)
		man := &Manifest{l: l, snap: snap, stamp: stamp}
		if sl == nil {
			m, err := man.Get()
			if err != nil {
				return nil, err
			}
			listing, keep, err := l.Store.ListingOf(snap, m)
			if err != nil {
				// listed with size 0; opening it fails with EIO
				l.log().Error("blob unreadable", "snapshot", snap.String(), "err", err)
			}
			if keep {
				l.Index.PutListing(snap, stamp, m, listing)
			}
			sl = &listing
		}
		return l.archiveEntries(man, sl), nil
	}
}

// archiveEntries are the entries of a snapshot's listing.
func (l *Layout) archiveEntries(man *Manifest, sl *store.SnapListing) []Entry {
	snap := man.snap
	es := make([]Entry, 0, len(sl.Archives))
	for i := range sl.Archives {
		la := &sl.Archives[i]
		a := &Archive{Name: la.Name, Man: man}
		e := Entry{Name: la.Name, Ino: Ino(a.Path()), Size: la.Size, Mtime: snap.Time, Archive: a}
		switch la.Kind {
		case store.ArchiveImage, store.ArchiveOther, store.ArchiveBlob:
			e.Kind, e.Mode, a.Blob = KindFile, syscall.S_IFREG|l.FileMode, la.Kind == store.ArchiveBlob
			if la.Data != nil {
				a.data.Store(la.Data)
			}
		case store.ArchiveSplitPxar, store.ArchiveSinglePxar:
			if !l.Trees {
				l.log().Info("file archive not shown: no pxar reader in this build", "snapshot", snap.String(), "archive", la.Name)
				continue
			}
			e.Kind, e.Mode, e.Size = KindTree, ModeDir, 0
			if la.Root != nil {
				a.root.Store(la.Root)
			}
		default:
			continue
		}
		es = append(es, e)
	}
	return es
}

// Archive is one archive of a snapshot's listing, shared by the nodes a
// mount makes of it: its name, its snapshot's manifest and what this
// mount or one before learned of it (its root's attributes, an image's
// bytes of data), kept in the snapshot index too.
type Archive struct {
	Name string
	Blob bool      // a blob: the file is its decoded content
	Man  *Manifest // which files to read: from the manifest

	root atomic.Pointer[store.RootAttr]
	data atomic.Pointer[uint64]
}

// Snapshot is the archive's snapshot.
func (a *Archive) Snapshot() store.Snapshot { return a.Man.snap }

// Path is the archive's path in the store: the key of its inode numbers.
func (a *Archive) Path() string { return a.Man.snap.String() + "/" + a.Name }

// Root returns a file archive's root attributes once known; nil before.
func (a *Archive) Root() *store.RootAttr { return a.root.Load() }

// LearnedRoot keeps a file archive's root attributes, read from the
// archive, for the rest of the mount and in the snapshot index (for the
// version of the manifest the listing was made of).
func (a *Archive) LearnedRoot(r store.RootAttr) {
	if a.root.CompareAndSwap(nil, &r) {
		a.Man.l.Index.PutRoot(a.Man.snap, a.Man.stamp, a.Name, r)
	}
}

// Data returns an image's bytes of data (the chunks not all zeros), once
// known.
func (a *Archive) Data() (uint64, bool) {
	if p := a.data.Load(); p != nil {
		return *p, true
	}
	return 0, false
}

// LearnedData keeps an image's bytes of data, as LearnedRoot.
func (a *Archive) LearnedData(data uint64) {
	if a.data.CompareAndSwap(nil, &data) {
		a.Man.l.Index.PutData(a.Man.snap, a.Man.stamp, a.Name, data)
	}
}

// Manifest is a snapshot's manifest as its archives use it: read and
// checked (Layout.Check) at the first open of one of them when the
// snapshot was listed from the snapshot index, so that listing a
// snapshot and stat-ing its archives reads no manifest. Every read of
// data goes through it and the indexes it checks.
type Manifest struct {
	l     *Layout
	snap  store.Snapshot
	stamp store.ManifestStamp // the version the listing was made of

	mu sync.Mutex
	m  *store.Manifest
}

// NewManifest is snapshot snap's manifest, read at the first Get.
func (l *Layout) NewManifest(snap store.Snapshot) *Manifest {
	return &Manifest{l: l, snap: snap}
}

// Get reads and checks the manifest once, and returns it.
func (s *Manifest) Get() (*store.Manifest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m != nil {
		return s.m, nil
	}
	m, err := s.l.Store.ReadManifest(s.snap)
	if err != nil {
		return nil, err
	}
	if s.l.Check != nil {
		if err := s.l.Check(s.snap, m); err != nil {
			return nil, err
		}
	}
	s.m = m
	return m, nil
}

// Archive returns the manifest and its archive called name: which files
// to read comes from the manifest, never from the index.
func (s *Manifest) Archive(name string) (*store.Manifest, store.Archive, error) {
	m, err := s.Get()
	if err != nil {
		return nil, store.Archive{}, err
	}
	for _, a := range store.Archives(m) {
		if a.Name == name {
			return m, a, nil
		}
	}
	return nil, store.Archive{}, fmt.Errorf("snapshot %s: archive %s listed but %w: not in its manifest", s.snap, name, store.ErrBadManifest)
}
