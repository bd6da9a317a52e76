package store

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// maxListedArchives bounds a cached listing: a snapshot of more archives
// is listed from its manifest every time.
const maxListedArchives = 1024

// SnapListing is what a mount lists of a plain finished snapshot (one
// whose manifest names no key and carries no signature): its archives as
// the manifest has them, a blob's decoded size, and a file archive's
// root attributes once the mount opened its tree. Like the rest of the
// snapshot index it only ever gives attributes and names: reading data
// goes through the manifest and its checked indexes.
type SnapListing struct {
	Archives []ListedArchive `json:"a"`
}

// ListedArchive is one archive of a SnapListing.
type ListedArchive struct {
	Name string      `json:"n"`
	Kind ArchiveKind `json:"k"`
	Size uint64      `json:"z"`           // Archive.Size; a blob's decoded size
	Root *RootAttr   `json:"r,omitempty"` // a file archive's root, once known
	// Data is the bytes of a fixed index's chunks that are not all
	// zeros, once known: the mount's st_blocks of an image.
	Data *uint64 `json:"d,omitempty"`
}

// RootAttr is the attributes of a file archive's root directory.
type RootAttr struct {
	Mode  uint32 `json:"m"`
	UID   uint32 `json:"u"`
	GID   uint32 `json:"g"`
	Mtime int64  `json:"t"` // ns
	Size  uint64 `json:"z,omitempty"`
	Nlink uint32 `json:"l,omitempty"`
}

// ListingOf is the listing of snapshot snap's manifest m, a blob's size
// decoded from it (the manifest gives its stored file), and whether the
// index may keep it: the snapshot is plain, has at most
// maxListedArchives archives and every blob decoded. A blob that did not
// decode is listed with size 0 and named in the error.
func (s *Store) ListingOf(snap Snapshot, m *Manifest) (SnapListing, bool, error) {
	as := Archives(m)
	l := SnapListing{Archives: make([]ListedArchive, len(as))}
	keep := plainManifest(m) && len(as) <= maxListedArchives
	var errs []error
	for i, a := range as {
		l.Archives[i] = ListedArchive{Name: a.Name, Kind: a.Kind, Size: a.Size}
		if a.Kind != ArchiveBlob {
			continue
		}
		data, err := s.ReadBlob(snap, m, a.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("blob %s: %w", a.Name, err))
			l.Archives[i].Size, keep = 0, false
			continue
		}
		l.Archives[i].Size = uint64(len(data))
	}
	return l, keep, errors.Join(errs...)
}

// plainManifest: SnapshotKey needs no key for m and checks nothing.
func plainManifest(m *Manifest) bool {
	_, hasFP, err := m.KeyFingerprint()
	return err == nil && !hasFP && m.CryptMode() == CryptNone && m.Signature == nil
}

// clone copies l, so that an entry handed out is never changed.
func (l *SnapListing) clone() *SnapListing {
	c := &SnapListing{Archives: make([]ListedArchive, len(l.Archives))}
	copy(c.Archives, l.Archives)
	return c
}

// check refuses a listing no writer of the index makes.
func (l *SnapListing) check() error {
	if len(l.Archives) > maxListedArchives {
		return fmt.Errorf("listing of %d archives, limit %d", len(l.Archives), maxListedArchives)
	}
	seen := make(map[string]bool, len(l.Archives))
	for _, a := range l.Archives {
		if err := a.check(); err != nil {
			return err
		}
		if seen[a.Name] {
			return fmt.Errorf("archive %q listed twice", a.Name)
		}
		seen[a.Name] = true
	}
	return nil
}

var errBadListing = errors.New("bad listing")

func (a ListedArchive) check() error {
	switch {
	case a.Name == "" || a.Name == "." || a.Name == ".." || len(a.Name) > 255 || strings.ContainsAny(a.Name, "/\x00"):
		return fmt.Errorf("%w: archive name %q", errBadListing, a.Name)
	case a.Kind < ArchiveImage || a.Kind > ArchiveOther:
		return fmt.Errorf("%w: archive %q of kind %d", errBadListing, a.Name, a.Kind)
	case a.Data != nil && (*a.Data > a.Size || (a.Kind != ArchiveImage && a.Kind != ArchiveOther)):
		return fmt.Errorf("%w: archive %q of %d bytes has %d of data", errBadListing, a.Name, a.Size, *a.Data)
	case a.Root == nil:
		return nil
	case a.Kind != ArchiveSplitPxar && a.Kind != ArchiveSinglePxar:
		return fmt.Errorf("%w: archive %q has a root but is no file archive", errBadListing, a.Name)
	case a.Root.Mode&syscall.S_IFMT != syscall.S_IFDIR:
		return fmt.Errorf("%w: archive %q: root of mode %o", errBadListing, a.Name, a.Root.Mode)
	}
	return nil
}
