package snapdiff

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/dustin/go-humanize"
)

// Report is what cairn diff --json prints: one document, written as the
// walks go (changes first), so memory does not grow with the changes.
type Report struct {
	Changes  []Change  `json:"changes"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	Content  bool      `json:"content"`
	Archives []Archive `json:"archives"`
	Added    int64     `json:"added"`
	Removed  int64     `json:"removed"`
	Changed  int64     `json:"changed"`
}

// Change is one added, removed or changed path of a file archive.
type Change struct {
	Archive string   `json:"archive"`
	Path    string   `json:"path"`
	Change  string   `json:"change"`
	Type    string   `json:"type"`
	Reasons []string `json:"reasons,omitempty"`
}

// Archive is one archive of either snapshot.
type Archive struct {
	Archive      string `json:"archive"`
	Kind         string `json:"kind"`
	Status       string `json:"status"`
	Added        int64  `json:"added"`
	Removed      int64  `json:"removed"`
	Changed      int64  `json:"changed"`
	FromSize     uint64 `json:"from_size"`
	ToSize       uint64 `json:"to_size"`
	Chunks       int    `json:"chunks"`
	ChunksDiffer int    `json:"chunks_differ"`
	BytesDiffer  int64  `json:"bytes_differ"`
}

// ArchiveNames lists the archives to compare: only (if given, from
// either snapshot), else every archive of either, sorted by name.
func ArchiveNames(m1, m2 *store.Manifest, only []string) ([]string, error) {
	var names []string
	for _, m := range []*store.Manifest{m1, m2} {
		for _, ar := range store.Archives(m) {
			if !slices.Contains(names, ar.Name) {
				names = append(names, ar.Name)
			}
		}
	}
	slices.Sort(names)
	if len(only) == 0 {
		return names, nil
	}
	ar1, err1 := store.FindArchive(m1, only[0])
	ar2, err2 := store.FindArchive(m2, only[0])
	switch {
	case err1 == nil:
		return []string{ar1.Name}, nil
	case err2 == nil:
		return []string{ar2.Name}, nil
	}
	return nil, fmt.Errorf("archive %q is in neither (they have: %s)", only[0], strings.Join(names, ", "))
}

// Differ compares the archives of two snapshots of one store.
type Differ struct {
	Store    *store.Store
	Cache    *chunkcache.Cache
	Out      *Writer
	Content  bool // compare file contents too (Trees)
	Snapshot [2]store.Snapshot
	Manifest [2]*store.Manifest
}

// Compare compares archive name of both snapshots and writes what it
// finds to Out.
func (d *Differ) Compare(ctx context.Context, name string) error {
	var ars [2]*store.Archive
	for i, m := range d.Manifest {
		if ar, err := store.FindArchive(m, name); err == nil {
			ars[i] = &ar
		}
	}
	rep := Archive{Archive: name}
	for i, ar := range ars {
		if ar == nil {
			continue
		}
		rep.Kind = KindName(ar.Kind)
		size := ar.Size
		if fi, ok := d.Manifest[i].File(ar.Files[len(ar.Files)-1]); ok && ar.Kind == store.ArchiveSplitPxar {
			size = fi.Size // the payload stream's
		}
		if i == 0 {
			rep.FromSize = size
		} else {
			rep.ToSize = size
		}
	}
	switch {
	case ars[0] == nil:
		rep.Status = "added"
	case ars[1] == nil:
		rep.Status = "removed"
	case d.sameFiles(*ars[0], *ars[1]):
		rep.Status = "unchanged"
	case KindName(ars[0].Kind) != KindName(ars[1].Kind):
		return fmt.Errorf("archive %s is a %s archive in %s and a %s archive in %s", name,
			KindName(ars[0].Kind), d.Snapshot[0], KindName(ars[1].Kind), d.Snapshot[1])
	default:
		rep.Status = "changed"
		if err := d.changed(ctx, &rep, *ars[0], *ars[1]); err != nil {
			return err
		}
		if rep.Kind == "file_archive" && rep.Added+rep.Removed+rep.Changed == 0 {
			rep.Status = "unchanged"
		}
	}
	return d.Out.Archive(rep)
}

// sameFiles reports whether both archives have the same index files
// (by the manifests' checksums): then their contents are the same.
func (d *Differ) sameFiles(x, y store.Archive) bool {
	if x.Kind != y.Kind || len(x.Files) != len(y.Files) {
		return false
	}
	for i := range x.Files {
		f1, ok1 := d.Manifest[0].File(x.Files[i])
		f2, ok2 := d.Manifest[1].File(y.Files[i])
		if !ok1 || !ok2 || f1.Csum != f2.Csum || f1.Size != f2.Size {
			return false
		}
	}
	return true
}

// changed compares two archives whose files differ.
func (d *Differ) changed(ctx context.Context, rep *Archive, x, y store.Archive) error {
	switch rep.Kind {
	case "blob":
		return nil
	case "file_archive":
		return d.files(ctx, rep, x, y)
	}
	return d.indexes(rep, x, y)
}

// files walks two file archives in step.
func (d *Differ) files(ctx context.Context, rep *Archive, x, y store.Archive) error {
	from, close1, err := filearchive.Open(ctx, d.Store, d.Snapshot[0], d.Manifest[0], x, d.Cache)
	if err != nil {
		return err
	}
	defer close1()
	to, close2, err := filearchive.Open(ctx, d.Store, d.Snapshot[1], d.Manifest[1], y, d.Cache)
	if err != nil {
		return err
	}
	defer close2()
	err = Trees(ctx, from, to, d.Content, func(c Change) error {
		switch c.Change {
		case "added":
			rep.Added++
		case "removed":
			rep.Removed++
		default:
			rep.Changed++
		}
		c.Archive = rep.Archive
		return d.Out.Change(c)
	})
	if err != nil {
		return fmt.Errorf("archive %s of %s and %s: %w", x.Name, d.Snapshot[0], d.Snapshot[1], err)
	}
	return nil
}

// indexes compares the chunk digests of two image (or other) archives.
func (d *Differ) indexes(rep *Archive, x, y store.Archive) error {
	ix, err := d.Store.OpenSnapshotIndex(d.Snapshot[0], d.Manifest[0], x.Files[0])
	if err != nil {
		return err
	}
	defer ix.Close()
	iy, err := d.Store.OpenSnapshotIndex(d.Snapshot[1], d.Manifest[1], y.Files[0])
	if err != nil {
		return err
	}
	defer iy.Close()
	rep.Chunks = iy.Len()
	rep.ChunksDiffer, rep.BytesDiffer, err = Indexes(ix, iy, x.Kind == store.ArchiveImage && y.Kind == store.ArchiveImage)
	return err
}

// archiveText is the text line of an archive that is not unchanged.
func archiveText(r Archive, from, to string) string {
	switch r.Status {
	case "added":
		return fmt.Sprintf("+ %s (archive only in %s)", termsafe.Quote(r.Archive), to)
	case "removed":
		return fmt.Sprintf("- %s (archive only in %s)", termsafe.Quote(r.Archive), from)
	}
	switch r.Kind {
	case "image", "other":
		s := fmt.Sprintf("M %s: %d of %d chunks differ (%s of %s)", termsafe.Quote(r.Archive), r.ChunksDiffer, r.Chunks,
			humanize.IBytes(uint64(r.BytesDiffer)), humanize.IBytes(r.ToSize))
		if r.FromSize != r.ToSize {
			s += fmt.Sprintf(", size %s -> %s", humanize.IBytes(r.FromSize), humanize.IBytes(r.ToSize))
		}
		return s
	case "blob":
		return fmt.Sprintf("M %s (content)", termsafe.Quote(r.Archive))
	}
	return ""
}

// KindName names how an archive is stored as reports do: "image",
// "file_archive", "blob" or "other".
func KindName(k store.ArchiveKind) string {
	switch k {
	case store.ArchiveImage:
		return "image"
	case store.ArchiveSplitPxar, store.ArchiveSinglePxar:
		return "file_archive"
	case store.ArchiveBlob:
		return "blob"
	}
	return "other"
}
