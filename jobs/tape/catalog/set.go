package catalog

import (
	"sort"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// Set is the catalog of a media set: the catalogs of its tapes.
type Set struct {
	cats []*Catalog
}

// Add adds a tape's catalog.
func (s *Set) Add(c *Catalog) { s.cats = append(s.cats, c) }

// Replace swaps in c for the catalog of the same tape (or adds it).
func (s *Set) Replace(c *Catalog) {
	for i, old := range s.cats {
		if old.media == c.media {
			s.cats[i] = c
			return
		}
	}
	s.Add(c)
}

// Catalogs returns the tapes' catalogs in the order added.
func (s *Set) Catalogs() []*Catalog { return s.cats }

// ContainsChunk reports whether any tape of the set holds the chunk.
func (s *Set) ContainsChunk(store string, d chunk.Digest) bool {
	_, _, ok := s.LookupChunk(store, d)
	return ok
}

// LookupChunk returns the tape and file that hold a chunk.
func (s *Set) LookupChunk(store string, d chunk.Digest) (format.UUID, uint64, bool) {
	for _, c := range s.cats {
		if n, ok := c.LookupChunk(store, d); ok {
			return c.media, n, true
		}
	}
	return format.UUID{}, 0, false
}

// LookupSnapshot returns the tape and file that hold a snapshot archive.
func (s *Set) LookupSnapshot(store, snapshot string) (format.UUID, uint64, bool) {
	for _, c := range s.cats {
		if n, ok := c.LookupSnapshot(store, snapshot); ok {
			return c.media, n, true
		}
	}
	return format.UUID{}, 0, false
}

// SnapshotRef locates a snapshot archive.
type SnapshotRef struct {
	Store, Snapshot string
	Media           format.UUID
	File            uint64
}

// Snapshots lists the set's snapshot archives, sorted by store and name.
func (s *Set) Snapshots() []SnapshotRef {
	var out []SnapshotRef
	for _, c := range s.cats {
		for store, ct := range c.stores {
			for snap, n := range ct.snapshots {
				out = append(out, SnapshotRef{store, snap, c.media, n})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Store != out[j].Store {
			return out[i].Store < out[j].Store
		}
		return out[i].Snapshot < out[j].Snapshot
	})
	return out
}

// SnapshotArchives lists every snapshot archive of the set, also those
// that claim a snapshot another archive claims (Snapshots lists one per
// tape and name: the last), in tape order within each tape.
func (s *Set) SnapshotArchives() []SnapshotRef {
	var out []SnapshotRef
	for _, c := range s.cats {
		for _, f := range c.Files() {
			if f.Kind == KindSnapshot {
				out = append(out, SnapshotRef{f.Store, f.Snapshot, c.media, f.Number})
			}
		}
	}
	return out
}
