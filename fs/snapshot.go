package fs

import (
	"context"
	"syscall"

	"github.com/cairnfs/cairn/store"
	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// snapshotLister lists a finished snapshot's archives: images (and other
// single-index archives) as files of their data size, blobs as files of
// their decoded size, file archives as trees when a TreeOpener is
// configured and left out (with a log line) otherwise. The listing of a
// plain snapshot comes from the snapshot index while its manifest is the
// one it was made of (store.ListingIndex), with no stat at all when the
// group's listing vouched for it (known); else from the manifest, and
// the index keeps it. Either way the nodes read the manifest again
// before any data (snapManifest).
func (f *mountFS) snapshotLister(snap store.Snapshot, known store.ManifestStamp) lister {
	return func(ctx context.Context) ([]entry, error) {
		l, stamp := f.listIdx.Listing(snap, known)
		sm := &snapManifest{f: f, snap: snap, stamp: stamp}
		if l == nil {
			m, err := sm.get()
			if err != nil {
				return nil, err
			}
			listing, keep := f.listingOf(snap, m)
			if keep {
				f.listIdx.PutListing(snap, stamp, m, listing)
			}
			l = &listing
		}
		return f.listedEntries(snap, sm, l), nil
	}
}

// listingOf is the listing of manifest m, blobs decoded to learn their
// sizes, and whether the index may keep it (not when a blob did not
// decode: it is listed with size 0, and opening it fails with EIO).
func (f *mountFS) listingOf(snap store.Snapshot, m *store.Manifest) (store.SnapListing, bool) {
	l, keep, err := f.s.ListingOf(snap, m)
	if err != nil {
		f.log.Error("blob unreadable", "snapshot", snap.String(), "err", err)
	}
	return l, keep
}

// listedEntries are the entries of a snapshot's listing.
func (f *mountFS) listedEntries(snap store.Snapshot, sm *snapManifest, l *store.SnapListing) []entry {
	es := make([]entry, 0, len(l.Archives))
	for i := range l.Archives {
		a := &l.Archives[i]
		path := snap.String() + "/" + a.Name
		switch a.Kind {
		case store.ArchiveImage, store.ArchiveOther, store.ArchiveBlob:
			attr := f.makeAttr(syscall.S_IFREG|f.imageMode, inoOf(path), a.Size, snap.Time)
			name, blob, known := a.Name, a.Kind == store.ArchiveBlob, a.Data != nil
			if known { // an image's data, learned by a mount before (sparse.go)
				attr.Blocks = (*a.Data + 511) / 512
			}
			es = append(es, entry{name: a.Name, attr: attr, make: func(at fuse.Attr) gofs.InodeEmbedder {
				return &archiveFile{node: node{fsys: f, attr: at}, snap: snap, man: sm, name: name, blob: blob, blocksKnown: known}
			}})
		case store.ArchiveSplitPxar, store.ArchiveSinglePxar:
			if f.trees == nil {
				f.log.Info("file archive not shown: no pxar reader in this build", "snapshot", snap.String(), "archive", a.Name)
				continue
			}
			es = append(es, f.treeEntry(snap, sm, a, path))
		}
	}
	return es
}
