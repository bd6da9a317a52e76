package main

import (
	"bufio"
	"fmt"

	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
)

// archiveRow is one archive of a snapshot as ls SNAPSHOT --json prints it.
type archiveRow struct {
	Name    string        `json:"name"`
	Kind    string        `json:"kind"`
	Storage string        `json:"storage"`
	Size    uint64        `json:"size"`
	Files   []archiveFile `json:"files"`
}

// archiveFile is one file of an archive in the snapshot directory.
type archiveFile struct {
	Name string `json:"name"`
	Size uint64 `json:"size"`
}

// snapshotArchives is what ls SNAPSHOT --json prints.
type snapshotArchives struct {
	Snapshot string       `json:"snapshot"`
	Archives []archiveRow `json:"archives"`
}

// qualifyRef returns snapshot reference arg taken in namespace ns (--ns)
// as one reference naming its namespace, or a usage error.
func qualifyRef(ns, arg string) (string, error) {
	r, err := parseRefIn(ns, arg)
	if err != nil {
		return "", err
	}
	return r.String(), nil
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

func archiveRows(m *store.Manifest) []archiveRow {
	sizes := map[string]uint64{}
	for _, f := range m.Files {
		sizes[f.Filename] = f.Size
	}
	var rows []archiveRow
	for _, ar := range store.Archives(m) {
		kind, storage := archiveKind(ar.Kind)
		row := archiveRow{Name: ar.Name, Kind: kind, Storage: storage, Files: []archiveFile{}}
		for _, f := range ar.Files {
			row.Files = append(row.Files, archiveFile{Name: f, Size: sizes[f]})
			row.Size += sizes[f]
		}
		rows = append(rows, row)
	}
	return rows
}

// lsArchives lists the archives of snapshot ref.
func (a *app) lsArchives(ref string, asJSON bool) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	snap, m, err := a.resolveSnapshot(s, ref)
	if err != nil {
		return err
	}
	rows := archiveRows(m)
	if asJSON {
		if rows == nil {
			rows = []archiveRow{}
		}
		return printJSON(a, snapshotArchives{Snapshot: snap.String(), Archives: rows})
	}
	w := bufio.NewWriter(a.stdout)
	for _, r := range rows {
		storage := r.Storage
		if r.Kind == "file_archive" && len(r.Files) == 2 {
			storage = fmt.Sprintf("split: metadata %s, payload %s", humanize.IBytes(r.Files[0].Size), humanize.IBytes(r.Files[1].Size))
		}
		fmt.Fprintf(w, "%-24s %-12s %10s  %s\n", quoteName(r.Name), r.Kind, humanize.IBytes(r.Size), storage)
	}
	return w.Flush()
}
