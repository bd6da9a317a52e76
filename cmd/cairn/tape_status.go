package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
)

// tapeRow is one tape in `cairn tape status`.
type tapeRow struct {
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

// setRow is one media set in `cairn tape status`.
type setRow struct {
	UUID      string    `json:"uuid"`
	Pool      string    `json:"pool"`
	Created   time.Time `json:"created"`
	Tapes     []string  `json:"tapes"`
	Snapshots int       `json:"snapshots"`
	Chunks    int       `json:"chunks"`
	Error     string    `json:"error,omitempty"`
}

type driveStatus struct {
	Drive     string    `json:"drive"`
	Tapes     []tapeRow `json:"tapes"`
	MediaSets []setRow  `json:"media_sets"`
}

func (a *app) tapeStatusCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --drive DIR [--json]",
		Short: "list the drive's tapes (how full each is) and media sets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := readDriveStatus(dir)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a, st)
			}
			printDriveStatus(a.stdout, st)
			return nil
		},
	}
	driveFlag(cmd, &dir)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// readDriveStatus reads the drive's state files and catalogs without
// taking the drive's lock, so it works while an export runs.
func readDriveStatus(dir string) (driveStatus, error) {
	st := driveStatus{Drive: dir, Tapes: []tapeRow{}, MediaSets: []setRow{}}
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
		row := tapeRow{Label: t.Label, Files: t.Files, Used: t.Used, Capacity: t.Capacity, Loaded: t.Loaded}
		if m, ok := inv.LookupLabel(t.Label); ok {
			fillMedia(&row, m)
		}
		st.Tapes = append(st.Tapes, row)
	}
	for _, m := range inv.List() {
		if !onDrive[m.Label.LabelText] {
			row := tapeRow{Label: m.Label.LabelText, Missing: true}
			fillMedia(&row, m)
			st.Tapes = append(st.Tapes, row)
		}
	}
	for _, set := range inv.MediaSets("") {
		st.MediaSets = append(st.MediaSets, readSetRow(dir, set))
	}
	return st, nil
}

func fillMedia(row *tapeRow, m media.Media) {
	row.UUID, row.Pool, row.Full = m.Label.UUID.String(), m.Label.Pool, m.Full
	if m.Set != nil && !m.Set.UUID.IsZero() {
		seq := m.Set.SeqNr
		row.MediaSet, row.SeqNr, row.Pool = m.Set.UUID.String(), &seq, m.Set.Pool
	}
}

func readSetRow(dir string, set format.MediaSetLabel) setRow {
	row := setRow{UUID: set.UUID.String(), Pool: set.Pool, Created: time.Unix(set.Ctime, 0).UTC(), Tapes: []string{}}
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

func printDriveStatus(w io.Writer, st driveStatus) {
	fmt.Fprintf(w, "drive %s\n", st.Drive)
	if len(st.Tapes) == 0 {
		fmt.Fprintln(w, "no tapes (cairn tape label or tape export create them)")
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TAPE\tPOOL\tMEDIA SET\tSEQ\tFILES\tUSED\tCAPACITY\tSTATE")
	for _, t := range st.Tapes {
		seq, state := "-", "writable"
		if t.SeqNr != nil {
			seq = fmt.Sprint(*t.SeqNr)
		}
		switch {
		case t.Missing:
			state = "missing from the drive"
		case t.UUID == "":
			state = "unlabelled"
		case t.Full:
			state = "full"
		}
		if t.Loaded {
			state += ", loaded"
		}
		used := fmt.Sprintf("%s (%.0f%%)", humanize.IBytes(uint64(t.Used)), 100*float64(t.Used)/float64(max(t.Capacity, 1)))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", t.Label, orDash(t.Pool), orDash(t.MediaSet), seq, t.Files,
			used, humanize.IBytes(uint64(t.Capacity)), state)
	}
	tw.Flush()
	if len(st.MediaSets) == 0 {
		return
	}
	fmt.Fprintln(w, "media sets:")
	for _, s := range st.MediaSets {
		fmt.Fprintf(w, "  %s  pool %s, created %s, tapes %s: %d snapshots, %d chunks\n", s.UUID, s.Pool,
			s.Created.Format(time.RFC3339), orNone(strings.Join(s.Tapes, ", ")), s.Snapshots, s.Chunks)
		if s.Error != "" {
			fmt.Fprintf(w, "      error: %s\n", s.Error)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// catalogFile is one catalogued tape file.
type catalogFile struct {
	File     uint64 `json:"file"`
	Kind     string `json:"kind"`
	Store    string `json:"store,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`
	Chunks   int    `json:"chunks,omitempty"`
}

type catalogTape struct {
	Label string        `json:"label"`
	UUID  string        `json:"uuid"`
	SeqNr uint64        `json:"seq_nr"`
	Files []catalogFile `json:"files"`
}

type catalogSnapshot struct {
	Store    string `json:"store"`
	Snapshot string `json:"snapshot"`
	Tape     string `json:"tape"`
	File     uint64 `json:"file"`
}

type catalogSet struct {
	UUID      string            `json:"uuid"`
	Pool      string            `json:"pool"`
	Tapes     []catalogTape     `json:"tapes"`
	Snapshots []catalogSnapshot `json:"snapshots"`
}

func (a *app) tapeCatalogCmd() *cobra.Command {
	var dir, set string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "catalog --drive DIR [--media-set UUID] [--json]",
		Short: "show what is where: the snapshots and chunk archives of each tape file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sets, err := readCatalogs(dir, set)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a, sets)
			}
			printCatalogs(a.stdout, sets)
			return nil
		},
	}
	driveFlag(cmd, &dir)
	cmd.Flags().StringVar(&set, "media-set", "", "only this media set (UUID)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// readCatalogs reads the catalogs of every media set of the drive (or of
// one), without the drive's lock.
func readCatalogs(dir, only string) ([]catalogSet, error) {
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
			return nil, usageErr("--media-set %q: want a UUID (see cairn tape status)", only)
		}
	}
	out := []catalogSet{}
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

func readCatalogSet(dir string, s format.MediaSetLabel) (catalogSet, error) {
	cs := catalogSet{UUID: s.UUID.String(), Pool: s.Pool, Tapes: []catalogTape{}, Snapshots: []catalogSnapshot{}}
	members, cats, err := media.ReadSet(dir, s.UUID)
	if err != nil {
		return cs, err
	}
	defer closeCatalogs(cats)
	labels := map[format.UUID]string{}
	for i, m := range members {
		labels[m.Label.UUID] = m.Label.LabelText
		t := catalogTape{Label: m.Label.LabelText, UUID: m.Label.UUID.String(), SeqNr: m.Set.SeqNr, Files: []catalogFile{}}
		for _, f := range cats.Catalogs()[i].Files() {
			t.Files = append(t.Files, catalogFile{File: f.Number, Kind: f.Kind.String(), Store: f.Store, Snapshot: f.Snapshot, Chunks: f.Chunks})
		}
		cs.Tapes = append(cs.Tapes, t)
	}
	for _, r := range cats.Snapshots() {
		cs.Snapshots = append(cs.Snapshots, catalogSnapshot{Store: r.Store, Snapshot: r.Snapshot, Tape: labels[r.Media], File: r.File})
	}
	return cs, nil
}

func printCatalogs(w io.Writer, sets []catalogSet) {
	if len(sets) == 0 {
		fmt.Fprintln(w, "no media sets")
	}
	for _, s := range sets {
		fmt.Fprintf(w, "media set %s (pool %s, %d tapes)\n", s.UUID, s.Pool, len(s.Tapes))
		for _, t := range s.Tapes {
			fmt.Fprintf(w, "  tape %s (seq %d)\n", t.Label, t.SeqNr)
			for _, f := range t.Files {
				switch f.Kind {
				case catalog.KindChunkArchive.String():
					fmt.Fprintf(w, "    file %-4d chunk archive     %s: %d chunks\n", f.File, f.Store, f.Chunks)
				case catalog.KindSnapshot.String():
					fmt.Fprintf(w, "    file %-4d snapshot archive  %s:%s\n", f.File, f.Store, f.Snapshot)
				case catalog.KindLabel.String():
					what := "media label"
					if f.File == 1 {
						what = "media set label"
					}
					fmt.Fprintf(w, "    file %-4d %s\n", f.File, what)
				default:
					fmt.Fprintf(w, "    file %-4d %s\n", f.File, f.Kind)
				}
			}
		}
		fmt.Fprintln(w, "  snapshots:")
		for _, r := range s.Snapshots {
			fmt.Fprintf(w, "    %s:%s  tape %s file %d\n", r.Store, r.Snapshot, r.Tape, r.File)
		}
	}
}
