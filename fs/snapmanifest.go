package fs

import (
	"fmt"
	"sync"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// snapManifest is a snapshot's manifest as its archives' nodes use it:
// read and checked (checkKey) at the first open of one of them when the
// snapshot was listed from the snapshot index, so that listing a
// snapshot and stat-ing its archives reads no manifest. Every read of
// data goes through it and the indexes it checks.
type snapManifest struct {
	f     *mountFS
	snap  store.Snapshot
	stamp store.ManifestStamp // the version the listing was made of

	mu sync.Mutex
	m  *store.Manifest
}

func (s *snapManifest) get() (*store.Manifest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m != nil {
		return s.m, nil
	}
	m, err := s.f.s.ReadManifest(s.snap)
	if err != nil {
		return nil, err
	}
	if err := s.f.checkKey(s.snap, m); err != nil {
		return nil, err
	}
	s.m = m
	return m, nil
}

// archive returns the manifest and its archive called name: which files
// to read comes from the manifest, never from the index.
func (s *snapManifest) archive(name string) (*store.Manifest, store.Archive, error) {
	m, err := s.get()
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

// learnedRoot keeps a file archive's root attributes in the snapshot
// index (for the version of the manifest the listing was made of).
func (s *snapManifest) learnedRoot(name string, root TreeEntry) {
	s.f.listIdx.PutRoot(s.snap, s.stamp, name, store.RootAttr{Mode: root.Mode, UID: root.UID, GID: root.GID,
		Mtime: root.Mtime.UnixNano(), Size: root.Size, Nlink: root.Nlink})
}

// learnedData keeps an image's bytes of data in the snapshot index, as
// learnedRoot.
func (s *snapManifest) learnedData(name string, data int64) {
	s.f.listIdx.PutData(s.snap, s.stamp, name, uint64(data))
}

// rootEntry is the TreeEntry of a root's attributes from the index.
func rootEntry(r *store.RootAttr) TreeEntry {
	return TreeEntry{Mode: r.Mode, UID: r.UID, GID: r.GID, Size: r.Size, Mtime: time.Unix(0, r.Mtime), Nlink: r.Nlink}
}

// knownRoot is the root's attributes from the snapshot index, if there.
func (o *openTree) knownRoot() (fuse.Attr, bool) {
	if o.root0 == nil {
		return fuse.Attr{}, false
	}
	a := o.attrOf(rootEntry(o.root0))
	a.Ino = inoOf(o.path)
	return a, true
}

// rootAttrOut answers a root's GETATTR from the index when it has it.
func (n *treeNode) rootAttrOut(out *fuse.AttrOut) bool {
	a, ok := n.tree.knownRoot()
	if ok {
		out.Attr = a
	}
	return ok
}
