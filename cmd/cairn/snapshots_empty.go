package main

import (
	"fmt"
	"io"

	"github.com/cairnfs/cairn/store"
)

// emptyGroups are the groups of namespace top and below that hold no
// snapshot directory: a directory the mount shows, which the snapshot
// rows alone never named (issue 30, point 9). A backup or tape restore
// that fails removes a group it made and left empty; forgetting a
// group's last snapshot keeps the group (as PBS does), and a backup
// killed before its first snapshot leaves one, until forget --group.
func emptyGroups(s *store.Store, top store.NS, rows []snapshotRow) ([]string, error) {
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		seen[r.Group] = true
	}
	nss, err := s.Namespaces(top)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range nss {
		groups, err := s.Groups(ns)
		if err != nil {
			return nil, fmt.Errorf("namespace %q: %w", ns, err)
		}
		for _, g := range groups {
			if !seen[g.String()] {
				out = append(out, g.String())
			}
		}
	}
	return out, nil
}

// printEmptyGroups names each empty group and how to remove it.
func printEmptyGroups(w io.Writer, empty []string, first bool) {
	for _, g := range empty {
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		fmt.Fprintf(w, "group %s: no snapshots (its last was forgotten, or its first backup killed; 'cairn forget --group %s' removes it)\n",
			quoteName(g), quoteName(g))
	}
}

// withEmpty is groupRows with the empty groups added, 0 snapshots each.
func withEmpty(groups []groupRow, empty []string) []groupRow {
	for _, g := range empty {
		groups = append(groups, groupRow{Group: g})
	}
	return groups
}
