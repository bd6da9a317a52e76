package main

import (
	"errors"
	"fmt"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/spf13/cobra"
)

// openDrive opens the drive of --drive, failing at once when another
// process uses it.
func (a *app) openDrive(dir string) (*drive.Drive, error) {
	abs, err := absDrive(dir)
	if err != nil {
		return nil, err
	}
	return tape.OpenTapeDrive(a.ctx, abs)
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
			if err != nil || capacity < drive.MinCapacity {
				return usageErr("--tape-size %q: want a size of at least 1M (e.g. 64M, 2G)", size)
			}
			if pool != "" {
				if err := drive.CheckLabel(pool); err != nil {
					return usageErr("--pool: %v", err)
				}
			}
			d, err := a.openDrive(dir)
			if err != nil {
				return err
			}
			defer d.Close()
			inv, err := media.LoadInventory(d.Dir())
			if err != nil {
				return err
			}
			for _, text := range args {
				if err := drive.CheckLabel(text); err != nil {
					return usageErr("%v", err)
				}
				if err := d.CreateTape(text, capacity); err != nil && !errors.Is(err, drive.ErrExists) {
					return err
				}
				l, err := media.LabelTape(d, inv, text, pool, force)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "labelled tape %s (uuid %s, pool %s)\n", text, l.UUID, orDash(pool))
			}
			return nil
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
			d, err := a.openDrive(dir)
			if err != nil {
				return err
			}
			defer d.Close()
			inv, err := media.LoadInventory(d.Dir())
			if err != nil {
				return err
			}
			for _, text := range args {
				if m, ok := inv.LookupLabel(text); ok && m.Set != nil && !m.Set.UUID.IsZero() && !force {
					return fmt.Errorf("tape %s belongs to media set %s (pool %s): %w; use --force to erase it anyway",
						text, m.Set.UUID, m.Set.Pool, media.ErrNotBlank)
				}
				if err := media.EraseTape(d, inv, text); err != nil {
					return err
				}
				msg := "erased"
				if remove {
					if err := d.Unload(); err != nil {
						return err
					}
					if err := d.RemoveTape(text); err != nil {
						return err
					}
					msg = "erased and removed"
				}
				fmt.Fprintf(a.stdout, "%s tape %s\n", msg, text)
			}
			return nil
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
			d, err := a.openDrive(dir)
			if err != nil {
				return err
			}
			defer d.Close()
			if len(args) == 0 {
				tapes, err := d.Tapes()
				if err != nil {
					return err
				}
				for _, t := range tapes {
					if t.Files > 0 {
						args = append(args, t.Label)
					}
				}
				if len(args) == 0 {
					return fmt.Errorf("drive %s holds no written tape", d.Dir())
				}
			}
			failed := 0
			for _, text := range args {
				c, err := media.RebuildCatalog(a.ctx, d, text, a.logger)
				if err != nil {
					fmt.Fprintf(a.stderr, "cairn: tape %s: %v\n", text, err)
					failed++
					continue
				}
				chunks, snaps := 0, 0
				for _, f := range c.Files() {
					chunks += f.Chunks
					if f.Kind == catalog.KindSnapshot {
						snaps++
					}
				}
				set := "no media set"
				if u, seq, ok := c.MediaSet(); ok {
					set = fmt.Sprintf("media set %s seq %d", u, seq)
				}
				fmt.Fprintf(a.stdout, "tape %s: catalog rebuilt (%s): %d files, %d chunks, %d snapshots\n",
					text, set, len(c.Files()), chunks, snaps)
			}
			if failed > 0 {
				return &codeError{exitError, fmt.Errorf("%d of %d tapes failed", failed, len(args))}
			}
			return nil
		},
	}
	driveFlag(cmd, &dir)
	return cmd
}
