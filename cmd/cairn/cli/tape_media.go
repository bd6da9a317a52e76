package cli

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/spf13/cobra"
)

// tapeErr turns the tape API's parameter errors into usage errors.
func tapeErr(err error) error {
	if errors.Is(err, jobs.ErrBadParam) {
		return usageErr("%v", err)
	}
	return err
}

func (a *app) tapeLabelCmd() *cobra.Command {
	var dir, pool, size string
	var force bool
	cmd := &cobra.Command{
		Use:   "label --drive DIR [--pool NAME] [--tape-size SIZE] [--force] LABEL…",
		Short: "label tapes (creating them on the virtual drive when missing)",
		Long: `Label writes a new media label to each tape, creating the tape with
--tape-size when the drive has none of that name. A tape labelled for a
pool is used only by that pool. A tape that belongs to a media set, or
holds data, is refused unless --force: its content is lost.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			capacity, err := jobs.ParseSize(size)
			if err != nil || capacity < tape.MinTapeSize {
				return usageErr("--tape-size %q: want a size of at least 1M (e.g. 64M, 2G)", size)
			}
			abs, err := absDrive(dir)
			if err != nil {
				return err
			}
			done, err := tape.Label(a.ctx, abs, args, tape.LabelOptions{Pool: pool, TapeSize: capacity, Force: force})
			for _, l := range done {
				fmt.Fprintf(a.stdout, "labelled tape %s (uuid %s, pool %s)\n", l.Label, l.UUID, cmp.Or(l.Pool, "-"))
			}
			return tapeErr(err)
		},
	}
	driveFlag(cmd, &dir)
	cmd.Flags().StringVar(&pool, "pool", "", "the pool the tapes are for (default: any pool may use them)")
	cmd.Flags().StringVar(&size, "tape-size", "64M", "capacity of tapes created now")
	cmd.Flags().BoolVar(&force, "force", false, "relabel tapes that hold data or belong to a media set")
	return cmd
}

func (a *app) tapeEraseCmd() *cobra.Command {
	var dir string
	var force, remove bool
	cmd := &cobra.Command{
		Use:   "erase --drive DIR [--force] [--remove] LABEL…",
		Short: "erase tapes and forget them (inventory and catalog)",
		Long: `Erase formats each tape (its files and label are gone) and removes it
from the inventory and its catalog. A tape that belongs to a media set is
refused unless --force: the set loses what that tape holds. --remove also
deletes the tape from the virtual drive.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			abs, err := absDrive(dir)
			if err != nil {
				return err
			}
			done, err := tape.Erase(a.ctx, abs, args, tape.EraseOptions{Force: force, Remove: remove})
			msg := "erased"
			if remove {
				msg = "erased and removed"
			}
			for _, text := range done {
				fmt.Fprintf(a.stdout, "%s tape %s\n", msg, text)
			}
			return err
		},
	}
	driveFlag(cmd, &dir)
	cmd.Flags().BoolVar(&force, "force", false, "erase tapes that belong to a media set")
	cmd.Flags().BoolVar(&remove, "remove", false, "also delete the tapes from the virtual drive")
	return cmd
}

func (a *app) tapeRebuildCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "rebuild-catalog --drive DIR [LABEL…]",
		Short: "read tapes and write their media catalogs anew (default: every tape of the drive)",
		Long: `Rebuild-catalog reads each tape from start to end and writes its media
catalog anew from what is on it, and updates the inventory from its
labels: use it when a catalog is lost or disagrees with the tape, or for
tapes from another drive. Files an interrupted export left unfinished are
skipped; a corrupt or foreign tape is an error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			abs, err := absDrive(dir)
			if err != nil {
				return err
			}
			failed, tapes := 0, 0
			err = tape.RebuildCatalogs(a.ctx, abs, args, a.logger, func(r tape.RebuiltCatalog) {
				tapes++
				if r.Err != nil {
					fmt.Fprintf(a.stderr, "cairn: tape %s: %v\n", r.Label, r.Err)
					failed++
					return
				}
				set := "no media set"
				if r.MediaSet != "" {
					set = fmt.Sprintf("media set %s seq %d", r.MediaSet, r.SeqNr)
				}
				fmt.Fprintf(a.stdout, "tape %s: catalog rebuilt (%s): %d files, %d chunks, %d snapshots\n",
					r.Label, set, r.Files, r.Chunks, r.Snapshots)
			})
			if err != nil {
				return err
			}
			if failed > 0 {
				return &codeError{exitError, fmt.Errorf("%d of %d tapes failed", failed, tapes)}
			}
			return nil
		},
	}
	driveFlag(cmd, &dir)
	return cmd
}
