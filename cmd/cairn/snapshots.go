package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
)

type snapshotRow struct {
	Snapshot string   `json:"snapshot"`
	Group    string   `json:"group"`
	Time     string   `json:"time"`
	Finished bool     `json:"finished"`
	Protect  bool     `json:"protected"`
	Size     uint64   `json:"size"`
	Archives []string `json:"archives"`
	Verify   string   `json:"verify_state,omitempty"`
	Error    string   `json:"error,omitempty"`
}

func (a *app) snapshotsCmd() *cobra.Command {
	var asJSON bool
	var ns string
	cmd := &cobra.Command{
		Use:   "snapshots [--ns NS] [--json]",
		Short: "list groups and snapshots with their sizes; unfinished ones are marked",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
			defer s.Close()
			rows, err := listSnapshots(a.ctx, s, store.NS(strings.Trim(ns, "/")))
			if err != nil {
				return err
			}
			if asJSON {
				if rows == nil {
					rows = []snapshotRow{}
				}
				return printJSON(a, rows)
			}
			if err := printSnapshots(a, rows); err != nil {
				return err
			}
			a.printLastGC(s)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&ns, "ns", "", "only this namespace and those below it")
	return cmd
}

func listSnapshots(ctx context.Context, s *store.Store, top store.NS) ([]snapshotRow, error) {
	sel, err := store.ParseSelector(top, nil)
	if err != nil {
		return nil, usageErr("--ns: %v", err)
	}
	var rows []snapshotRow
	for si, err := range s.Walk(ctx, sel) {
		if err != nil {
			return nil, err
		}
		rows = append(rows, snapshotRowOf(s, si))
	}
	return rows, nil
}

func snapshotRowOf(s *store.Store, si store.SnapshotInfo) snapshotRow {
	r := snapshotRow{Snapshot: si.String(), Group: si.Group.String(), Time: si.TimeString(),
		Finished: si.Finished, Protect: si.Protected, Archives: []string{}}
	if !si.Finished {
		return r
	}
	m, err := s.ReadManifest(si.Snapshot)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	for _, ar := range store.Archives(m) {
		r.Archives = append(r.Archives, ar.Name)
	}
	for _, f := range m.Files {
		r.Size += f.Size
	}
	if vs, ok := m.VerifyState(); ok {
		r.Verify = vs.State
	}
	return r
}

func printSnapshots(a *app, rows []snapshotRow) error {
	if len(rows) == 0 {
		fmt.Fprintln(a.stdout, "no snapshots")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SNAPSHOT\tSIZE\tARCHIVES\tPROTECTED\tSTATE")
	group := ""
	for _, r := range rows {
		if r.Group != group {
			group = r.Group
		}
		state := "ok"
		switch {
		case !r.Finished:
			state = "UNFINISHED (no manifest)"
		case r.Error != "":
			state = "ERROR: " + r.Error
		case r.Verify != "":
			state = "verify " + r.Verify
		}
		size := "-"
		if r.Finished {
			size = humanize.IBytes(r.Size)
		}
		prot := "-"
		if r.Protect {
			prot = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Snapshot, size, joinNames(r.Archives), prot, state)
	}
	return tw.Flush()
}

func joinNames(n []string) string {
	if len(n) == 0 {
		return "-"
	}
	s := n[0]
	for _, x := range n[1:] {
		s += "," + x
	}
	return s
}
