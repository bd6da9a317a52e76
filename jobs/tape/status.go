package tape

import (
	"fmt"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
	"github.com/cairnfs/cairn/jobs/tape/media"
)

// TapeStatus is one tape of a drive: how full it is and what it belongs
// to.
type TapeStatus struct {
	Label    string  `json:"label"`
	UUID     string  `json:"uuid,omitempty"` // empty: not labelled
	Pool     string  `json:"pool,omitempty"`
	MediaSet string  `json:"media_set,omitempty"`
	SeqNr    *uint64 `json:"seq_nr,omitempty"`
	Files    int     `json:"files"`
	Used     int64   `json:"used"`
	Capacity int64   `json:"capacity"`
	Full     bool    `json:"full"`
	Loaded   bool    `json:"loaded,omitempty"`
	Missing  bool    `json:"missing,omitempty"` // in the inventory, not in the drive
}

// SetStatus is one media set of a drive.
type SetStatus struct {
	UUID      string    `json:"uuid"`
	Pool      string    `json:"pool"`
	Created   time.Time `json:"created"`
	Tapes     []string  `json:"tapes"`
	Snapshots int       `json:"snapshots"`
	Chunks    int       `json:"chunks"`
	Error     string    `json:"error,omitempty"`
}

// DriveStatus is what `cairn tape status` shows: the drive's tapes and
// media sets.
type DriveStatus struct {
	Drive     string       `json:"drive"`
	Tapes     []TapeStatus `json:"tapes"`
	MediaSets []SetStatus  `json:"media_sets"`
}

// ReadDriveStatus reads the drive's state files and catalogs without
// taking the drive's lock, so it works while an export runs. A media set
// whose catalogs cannot be read is listed with its error.
func ReadDriveStatus(dir string) (DriveStatus, error) {
	st := DriveStatus{Drive: dir, Tapes: []TapeStatus{}, MediaSets: []SetStatus{}}
	tapes, err := drive.Inspect(dir)
	if err != nil {
		return st, err
	}
	inv, err := media.LoadInventory(dir)
	if err != nil {
		return st, err
	}
	onDrive := map[string]bool{}
	for _, t := range tapes {
		onDrive[t.Label] = true
		row := TapeStatus{Label: t.Label, Files: t.Files, Used: t.Used, Capacity: t.Capacity, Loaded: t.Loaded}
		if m, ok := inv.LookupLabel(t.Label); ok {
			fillMedia(&row, m)
		}
		st.Tapes = append(st.Tapes, row)
	}
	for _, m := range inv.List() {
		if !onDrive[m.Label.LabelText] {
			row := TapeStatus{Label: m.Label.LabelText, Missing: true}
			fillMedia(&row, m)
			st.Tapes = append(st.Tapes, row)
		}
	}
	for _, set := range inv.MediaSets("") {
		st.MediaSets = append(st.MediaSets, readSetStatus(dir, set))
	}
	return st, nil
}

func fillMedia(row *TapeStatus, m media.Media) {
	row.UUID, row.Pool, row.Full = m.Label.UUID.String(), m.Label.Pool, m.Full
	if m.Set != nil && !m.Set.UUID.IsZero() {
		seq := m.Set.SeqNr
		row.MediaSet, row.SeqNr, row.Pool = m.Set.UUID.String(), &seq, m.Set.Pool
	}
}

func readSetStatus(dir string, set format.MediaSetLabel) SetStatus {
	row := SetStatus{UUID: set.UUID.String(), Pool: set.Pool, Created: time.Unix(set.Ctime, 0).UTC(), Tapes: []string{}}
	members, cats, err := media.ReadSet(dir, set.UUID)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	defer closeCatalogs(cats)
	for _, m := range members {
		row.Tapes = append(row.Tapes, m.Label.LabelText)
	}
	row.Snapshots = len(cats.Snapshots())
	for _, c := range cats.Catalogs() {
		for _, s := range c.Stores() {
			row.Chunks += c.Chunks(s)
		}
	}
	return row
}

func closeCatalogs(cats *catalog.Set) {
	for _, c := range cats.Catalogs() {
		c.Close()
	}
}

// Kinds of tape file in a CatalogFile.
var (
	FileLabel        = catalog.KindLabel.String()
	FileChunkArchive = catalog.KindChunkArchive.String()
	FileSnapshot     = catalog.KindSnapshot.String()
)

// CatalogFile is one catalogued tape file.
type CatalogFile struct {
	File     uint64 `json:"file"`
	Kind     string `json:"kind"` // FileLabel, FileChunkArchive, FileSnapshot
	Store    string `json:"store,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`
	Chunks   int    `json:"chunks,omitempty"`
}

// CatalogTape is the catalog of one tape of a media set.
type CatalogTape struct {
	Label string        `json:"label"`
	UUID  string        `json:"uuid"`
	SeqNr uint64        `json:"seq_nr"`
	Files []CatalogFile `json:"files"`
}

// CatalogSnapshot says where a snapshot archive is.
type CatalogSnapshot struct {
	Store    string `json:"store"`
	Snapshot string `json:"snapshot"`
	Tape     string `json:"tape"`
	File     uint64 `json:"file"`
}

// CatalogSet is what `cairn tape catalog` shows of one media set.
type CatalogSet struct {
	UUID      string            `json:"uuid"`
	Pool      string            `json:"pool"`
	Tapes     []CatalogTape     `json:"tapes"`
	Snapshots []CatalogSnapshot `json:"snapshots"`
}

// ReadCatalogs reads the catalogs of every media set of the drive, or of
// the one named only (a UUID; a bad one is an error wrapping
// jobs.ErrBadParam), without the drive's lock.
func ReadCatalogs(dir, only string) ([]CatalogSet, error) {
	if _, err := drive.Inspect(dir); err != nil {
		return nil, err
	}
	inv, err := media.LoadInventory(dir)
	if err != nil {
		return nil, err
	}
	var want format.UUID
	if only != "" {
		if want, err = format.ParseUUID(only); err != nil {
			return nil, fmt.Errorf("%w: media set %q: want a UUID (see cairn tape status)", jobs.ErrBadParam, only)
		}
	}
	out := []CatalogSet{}
	for _, s := range inv.MediaSets("") {
		if only != "" && s.UUID != want {
			continue
		}
		cs, err := readCatalogSet(dir, s)
		if err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	if only != "" && len(out) == 0 {
		return nil, fmt.Errorf("media set %s: %w on drive %s", only, media.ErrUnknown, dir)
	}
	return out, nil
}

func readCatalogSet(dir string, s format.MediaSetLabel) (CatalogSet, error) {
	cs := CatalogSet{UUID: s.UUID.String(), Pool: s.Pool, Tapes: []CatalogTape{}, Snapshots: []CatalogSnapshot{}}
	members, cats, err := media.ReadSet(dir, s.UUID)
	if err != nil {
		return cs, err
	}
	defer closeCatalogs(cats)
	labels := map[format.UUID]string{}
	for i, m := range members {
		labels[m.Label.UUID] = m.Label.LabelText
		t := CatalogTape{Label: m.Label.LabelText, UUID: m.Label.UUID.String(), SeqNr: m.Set.SeqNr, Files: []CatalogFile{}}
		for _, f := range cats.Catalogs()[i].Files() {
			t.Files = append(t.Files, CatalogFile{File: f.Number, Kind: f.Kind.String(), Store: f.Store, Snapshot: f.Snapshot, Chunks: f.Chunks})
		}
		cs.Tapes = append(cs.Tapes, t)
	}
	for _, r := range cats.Snapshots() {
		cs.Snapshots = append(cs.Snapshots, CatalogSnapshot{Store: r.Store, Snapshot: r.Snapshot, Tape: labels[r.Media], File: r.File})
	}
	return cs, nil
}
