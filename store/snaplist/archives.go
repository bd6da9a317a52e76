package snaplist

import (
	"bufio"
	"fmt"
	"io"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
)

// ArchiveRow is one archive of a snapshot as ls SNAPSHOT lists it.
type ArchiveRow struct {
	Name    string        `json:"name"`
	Kind    string        `json:"kind"`
	Storage string        `json:"storage"`
	Size    uint64        `json:"size"`
	Files   []ArchiveFile `json:"files"`
}

// ArchiveFile is one file of an archive in the snapshot directory.
type ArchiveFile struct {
	Name string `json:"name"`
	Size uint64 `json:"size"`
}

// SnapshotArchives is what ls SNAPSHOT --json prints.
type SnapshotArchives struct {
	Snapshot string       `json:"snapshot"`
	Archives []ArchiveRow `json:"archives"`
}

// archiveKind names how an archive is stored: its kind (image, file
// archive, blob, other) and its storage in words.
func archiveKind(k store.ArchiveKind) (kind, storage string) {
	switch k {
	case store.ArchiveImage:
		return "image", "fixed index"
	case store.ArchiveSplitPxar:
		return "file_archive", "split: metadata and payload streams"
	case store.ArchiveSinglePxar:
		return "file_archive", "single stream"
	case store.ArchiveBlob:
		return "blob", "blob"
	}
	return "other", "index"
}

// ArchiveRows lists the archives of manifest m, with their files' sizes.
func ArchiveRows(m *store.Manifest) []ArchiveRow {
	sizes := map[string]uint64{}
	for _, f := range m.Files {
		sizes[f.Filename] = f.Size
	}
	var rows []ArchiveRow
	for _, ar := range store.Archives(m) {
		kind, storage := archiveKind(ar.Kind)
		row := ArchiveRow{Name: ar.Name, Kind: kind, Storage: storage, Files: []ArchiveFile{}}
		for _, f := range ar.Files {
			row.Files = append(row.Files, ArchiveFile{Name: f, Size: sizes[f]})
			row.Size += sizes[f]
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteArchives writes rows as text: name, kind, size and storage.
func WriteArchives(w io.Writer, rows []ArchiveRow) error {
	bw := bufio.NewWriter(w)
	for _, r := range rows {
		storage := r.Storage
		if r.Kind == "file_archive" && len(r.Files) == 2 {
			storage = fmt.Sprintf("split: metadata %s, payload %s", humanize.IBytes(r.Files[0].Size), humanize.IBytes(r.Files[1].Size))
		}
		fmt.Fprintf(bw, "%-24s %-12s %10s  %s\n", termsafe.Quote(r.Name), r.Kind, humanize.IBytes(r.Size), storage)
	}
	return bw.Flush()
}
