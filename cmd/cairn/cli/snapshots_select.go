package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/snaplist"
)

// listSelected lists the groups (every snapshot, finished or not) and
// snapshots named by args (as du takes them), each once, sorted by
// group and time, and the named groups without a snapshot. A name that
// does not resolve fails the listing.
func listSelected(ctx context.Context, a *app, s *store.Store, ns string, args []string) (rows []snaplist.Row, empty []string, err error) {
	sel, err := parseDuArgs(ns, args)
	if err != nil {
		return nil, nil, err
	}
	idx := s.OpenSnapIndex(a.logger)
	defer idx.Save(true)
	seen := map[store.Snapshot]bool{}
	add := func(si store.SnapshotInfo) {
		if !seen[si.Snapshot] {
			seen[si.Snapshot] = true
			rows = append(rows, snaplist.RowOf(idx, si))
		}
	}
	for g := range sel.groups {
		snaps, err := s.Snapshots(g)
		if err != nil {
			return nil, nil, err
		}
		if len(snaps) == 0 {
			empty = append(empty, g.String())
		}
		for _, si := range snaps {
			add(si)
		}
	}
	if len(sel.refs) > 0 { // without references Walk goes over the whole namespace
		for si, err := range s.Walk(ctx, store.Selector{NS: sel.ns, Refs: sel.refs}) {
			if err != nil {
				return nil, nil, err
			}
			add(si)
		}
	}
	slices.SortStableFunc(rows, func(x, y snaplist.Row) int {
		if c := strings.Compare(x.Group, y.Group); c != 0 {
			return c
		}
		return strings.Compare(x.Time, y.Time)
	})
	slices.Sort(empty)
	return rows, empty, nil
}
