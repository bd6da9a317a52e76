package cli

import (
	"github.com/cairnfs/cairn/jobs/tape"
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
			st.WriteText(a.stdout)
			return nil
		},
	}
	driveFlag(cmd, &dir)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
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
			tape.WriteCatalogs(a.stdout, sets)
			return nil
		},
	}
	driveFlag(cmd, &dir)
	cmd.Flags().StringVar(&set, "media-set", "", "only this media set (UUID)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
