package cli

import (
	"context"
	"strings"

	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/snaplist"
	"github.com/spf13/cobra"
)

func (a *app) snapshotsCmd() *cobra.Command {
	var asJSON, groups bool
	var ns string
	cmd := &cobra.Command{
		Use:   "snapshots [--ns NS] [GROUP | SNAPSHOT …] [--groups] [--json]",
		Short: "list groups and snapshots with their sizes, verify state, protection and notes",
		Long: `Snapshots lists each group (its snapshot count, newest snapshot, logical
size: the sum of its archives, and stored size: what its backups added to
the store, from the manifests' chunk_upload_stats, "unknown" for
snapshots without them), then its snapshots: size, archives, protection,
state (verify ok, verify failed, not verified, or unfinished) and the
first line of their notes. --groups lists the groups only.

Groups ([ns/NAME/…]TYPE/ID: every snapshot of the group, finished or
not) and snapshots (TYPE/ID/TIME, TYPE/ID/latest) given as arguments
restrict the listing to them; one that does not exist is an error.
Without arguments every group of --ns and the namespaces below it is
listed.`,
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
			defer s.Close()
			var rows []snaplist.Row
			var empty []string
			if len(args) > 0 {
				rows, empty, err = listSelected(a.ctx, a, s, ns, args)
			} else {
				top := store.NS(strings.Trim(ns, "/"))
				if rows, err = listSnapshots(a.ctx, a, s, top); err == nil {
					empty, err = snaplist.EmptyGroups(s, top, rows)
				}
			}
			if err != nil {
				return err
			}
			switch {
			case asJSON && groups:
				return printJSON(a, snaplist.WithEmpty(snaplist.Groups(rows), empty))
			case asJSON:
				if rows == nil {
					rows = []snaplist.Row{}
				}
				return printJSON(a, rows)
			}
			if err := snaplist.Write(a.stdout, rows, empty, groups); err != nil {
				return err
			}
			gc.WriteLastLine(a.stdout, s)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&groups, "groups", false, "list the groups only (count, newest, logical and stored size)")
	cmd.Flags().StringVar(&ns, "ns", "", "only this namespace and those below it")
	return cmd
}

func listSnapshots(ctx context.Context, a *app, s *store.Store, top store.NS) ([]snaplist.Row, error) {
	sel, err := store.ParseSelector(top, nil)
	if err != nil {
		return nil, usageErr("--ns: %v", err)
	}
	idx := s.OpenSnapIndex(a.logger)
	var rows []snaplist.Row
	for si, err := range s.Walk(ctx, sel) {
		if err != nil {
			return nil, err
		}
		rows = append(rows, snaplist.RowOf(idx, si))
	}
	idx.Save(top != "")
	return rows, nil
}
