package store

import (
	"context"
	"fmt"
	"iter"
	"slices"
)

// Selector names the snapshots a command or job works on: the snapshots
// Refs names, or, when Refs is empty, every snapshot of namespace NS and
// of the namespaces below it. Walk goes over them.
type Selector struct {
	NS   NS
	Refs []Ref
	// NewestFirst walks each group's snapshots newest first (oldest
	// first otherwise). It does not reorder Refs.
	NewestFirst bool
}

// ParseSelector reads a namespace and command-line snapshot references
// ("[ns/NAME/…]TYPE/ID[/TIME|/latest]"); a reference without a namespace
// is taken in ns, and empty strings are passed over. The error names the
// namespace or the reference that is wrong.
func ParseSelector(ns NS, refs []string) (Selector, error) {
	sel := Selector{NS: ns}
	if err := ns.Check(); err != nil {
		return sel, err
	}
	for _, r := range refs {
		if r == "" {
			continue
		}
		ref, err := ParseRef(r)
		if err != nil {
			return sel, err
		}
		if ref.NS == "" {
			ref.NS = ns
		}
		sel.Refs = append(sel.Refs, ref)
	}
	return sel, nil
}

// RefStrings returns the references as ParseSelector reads them back.
func (sel Selector) RefStrings() []string {
	out := make([]string, len(sel.Refs))
	for i, r := range sel.Refs {
		out[i] = r.String()
	}
	return out
}

// String returns the reference as the command line names it.
func (r Ref) String() string {
	if r.Latest {
		return r.Group.String() + "/latest"
	}
	return r.Snapshot.String()
}

// Walk yields the snapshots sel selects, each once, with the errors met
// on the way; the caller decides whether an error ends its loop.
//
// With Refs, each reference is resolved in the order given (latest: the
// group's newest finished snapshot) and yielded as finished; one that
// does not resolve yields an error naming it, and the walk goes on.
//
// Without Refs, every snapshot directory of the namespace tree is
// yielded, finished or not (SnapshotInfo.Finished tells): namespaces
// depth first and sorted, groups sorted by type and id, snapshots by
// time. A group whose snapshots cannot be listed yields an error naming
// it and the walk goes on with the next group; namespaces or groups that
// cannot be listed yield an error and end the walk. ctx is checked
// before each group; when it is done, its error is yielded last.
func (s *Store) Walk(ctx context.Context, sel Selector) iter.Seq2[SnapshotInfo, error] {
	if len(sel.Refs) > 0 {
		return s.walkRefs(ctx, sel.Refs)
	}
	return func(yield func(SnapshotInfo, error) bool) {
		if err := sel.NS.Check(); err != nil {
			yield(SnapshotInfo{}, err)
			return
		}
		nss, err := s.Namespaces(sel.NS)
		if err != nil {
			yield(SnapshotInfo{}, err)
			return
		}
		for _, ns := range nss {
			groups, err := s.Groups(ns)
			if err != nil {
				yield(SnapshotInfo{}, fmt.Errorf("namespace %q: %w", ns, err))
				return
			}
			for _, g := range groups {
				if !s.walkGroup(ctx, g, sel.NewestFirst, yield) {
					return
				}
			}
		}
	}
}

// walkGroup yields one group's snapshots; false ends the walk.
func (s *Store) walkGroup(ctx context.Context, g Group, newestFirst bool, yield func(SnapshotInfo, error) bool) bool {
	if err := ctx.Err(); err != nil {
		yield(SnapshotInfo{}, err)
		return false
	}
	snaps, err := s.Snapshots(g)
	if err != nil {
		return yield(SnapshotInfo{}, fmt.Errorf("group %s: %w", g, err))
	}
	if newestFirst {
		slices.Reverse(snaps)
	}
	for _, si := range snaps {
		if !yield(si, nil) {
			return false
		}
	}
	return true
}

// walkRefs resolves refs one by one, yielding each snapshot once.
func (s *Store) walkRefs(ctx context.Context, refs []Ref) iter.Seq2[SnapshotInfo, error] {
	return func(yield func(SnapshotInfo, error) bool) {
		seen := map[string]bool{}
		for _, r := range refs {
			if err := ctx.Err(); err != nil {
				yield(SnapshotInfo{}, err)
				return
			}
			snap, err := s.Resolve(r)
			if err != nil {
				if !yield(SnapshotInfo{}, fmt.Errorf("snapshot %s: %w", r, err)) {
					return
				}
				continue
			}
			key := snap.String()
			if seen[key] {
				continue
			}
			seen[key] = true
			if !yield(SnapshotInfo{Snapshot: snap, Finished: true, Protected: s.IsProtected(snap)}, nil) {
				return
			}
		}
	}
}
