package fs

import (
	"context"
	"syscall"

	"github.com/cairnfs/cairn/store"
	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// snapshotLister lists a finished snapshot's archives from its manifest:
// images (and other single-index archives) as files of their data size,
// blobs as files of their decoded size, file archives as trees when a
// TreeOpener is configured and left out (with a log line) otherwise.
func (f *mountFS) snapshotLister(snap store.Snapshot) lister {
	return func(ctx context.Context) ([]entry, error) {
		m, err := f.s.ReadManifest(snap)
		if err != nil {
			return nil, err
		}
		if err := f.checkKey(snap, m); err != nil {
			return nil, err
		}
		var es []entry
		for _, a := range store.Archives(m) {
			path := snap.String() + "/" + a.Name
			switch a.Kind {
			case store.ArchiveImage, store.ArchiveOther:
				attr := f.makeAttr(syscall.S_IFREG|f.imageMode, inoOf(path), a.Size, snap.Time)
				es = append(es, entry{name: a.Name, attr: attr, make: func(at fuse.Attr) gofs.InodeEmbedder {
					return &archiveFile{node: node{fsys: f, attr: at}, snap: snap, m: m, archive: a}
				}})
			case store.ArchiveBlob:
				es = append(es, f.blobEntry(snap, m, a, path))
			case store.ArchiveSplitPxar, store.ArchiveSinglePxar:
				if f.trees == nil {
					f.log.Info("file archive not shown: no pxar reader in this build", "snapshot", snap.String(), "archive", a.Name)
					continue
				}
				es = append(es, f.treeEntry(snap, m, a, path))
			}
		}
		return es, nil
	}
}

// blobEntry decodes the blob once to learn its size. A blob that does not
// decode is still listed, with size 0; opening it fails with EIO.
func (f *mountFS) blobEntry(snap store.Snapshot, m *store.Manifest, a store.Archive, path string) entry {
	var size uint64
	data, err := f.s.ReadBlob(snap, m, a.Files[0])
	if err != nil {
		f.log.Error("blob unreadable", "snapshot", snap.String(), "archive", a.Name, "err", err)
	} else {
		size = uint64(len(data))
	}
	attr := f.makeAttr(syscall.S_IFREG|f.imageMode, inoOf(path), size, snap.Time)
	return entry{name: a.Name, attr: attr, make: func(at fuse.Attr) gofs.InodeEmbedder {
		return &archiveFile{node: node{fsys: f, attr: at}, snap: snap, m: m, archive: a, blob: true}
	}}
}
