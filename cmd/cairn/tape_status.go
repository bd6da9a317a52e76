package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
)

func (a *app) tapeStatusCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --drive DIR [--json]",
		Short: "list the drive's tapes (how full each is) and media sets",
		Long: `Lists the tapes of the virtual drive: label, pool, media set and place
in it, files written, space used of the capacity and state; then the
media sets with their tapes, snapshots and chunks. It reads the drive's
files and inventory, not the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := tape.ReadDriveStatus(dir)
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

func printDriveStatus(w io.Writer, st tape.DriveStatus) {
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
			fmt.Fprintf(w, "      error: %s\n", escapeText(s.Error))
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) tapeCatalogCmd() *cobra.Command {
	var dir, set string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "catalog --drive DIR [--media-set UUID] [--json]",
		Short: "show what is where: the snapshots and chunk archives of each tape file",
		Long: `Shows the media catalogs of the drive's tapes (of every media set, or of
--media-set UUID): for each tape file, the snapshot archive it holds or
the chunk archive and how many chunks. tape rebuild-catalog writes a
catalog anew from the tape.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sets, err := tape.ReadCatalogs(dir, set)
			if err != nil {
				return tapeErr(err)
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

func printCatalogs(w io.Writer, sets []tape.CatalogSet) {
	if len(sets) == 0 {
		fmt.Fprintln(w, "no media sets")
	}
	for _, s := range sets {
		fmt.Fprintf(w, "media set %s (pool %s, %d tapes)\n", s.UUID, s.Pool, len(s.Tapes))
		for _, t := range s.Tapes {
			fmt.Fprintf(w, "  tape %s (seq %d)\n", t.Label, t.SeqNr)
			for _, f := range t.Files {
				switch f.Kind {
				case tape.FileChunkArchive:
					fmt.Fprintf(w, "    file %-4d chunk archive     %s: %d chunks\n", f.File, quoteName(f.Store), f.Chunks)
				case tape.FileSnapshot:
					fmt.Fprintf(w, "    file %-4d snapshot archive  %s\n", f.File, quoteName(f.Store+":"+f.Snapshot))
				case tape.FileLabel:
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
			fmt.Fprintf(w, "    %s  tape %s file %d\n", quoteName(r.Store+":"+r.Snapshot), quoteName(r.Tape), r.File)
		}
	}
}
