package snaplist

import (
	"strings"

	"github.com/cairnfs/cairn/store"
)

// CompleteRefs lists the groups of namespace ns and below ("TYPE/ID/",
// named relative to ns) and, once toComplete names a group and a slash,
// its snapshots' times and "latest" (snapshots: complete snapshots, not
// groups), for shell completion. It stops listing past maxCandidates.
func CompleteRefs(s *store.Store, ns, toComplete string, snapshots bool) ([]string, error) {
	base := store.NS(ns)
	if err := base.Check(); err != nil {
		return nil, err
	}
	spaces, err := s.Namespaces(base)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range spaces {
		groups, err := s.Groups(n)
		if err != nil {
			continue
		}
		for _, g := range groups {
			name := relGroup(base, g)
			if !snapshots {
				out = append(out, name)
				continue
			}
			if !strings.HasPrefix(toComplete, name+"/") {
				out = append(out, name+"/")
				continue
			}
			out = append(out, name+"/latest")
			snaps, err := s.Snapshots(g)
			if err != nil {
				continue
			}
			for _, si := range snaps {
				out = append(out, name+"/"+si.TimeString())
			}
		}
		if len(out) > maxCandidates {
			break
		}
	}
	return out, nil
}

// relGroup names g relative to namespace base (--ns), which holds it.
func relGroup(base store.NS, g store.Group) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(string(g.NS), string(base)), "/")
	return store.Group{NS: store.NS(rel), Type: g.Type, ID: g.ID}.String()
}

// maxCandidates bounds the names a completion lists (CompleteRefs: give
// or take a namespace's).
const maxCandidates = 5000

// FilterPrefix is the names of in that start with prefix, at most
// maxCandidates of them.
func FilterPrefix(in []string, prefix string) []string {
	var out []string
	for _, c := range in {
		if strings.HasPrefix(c, prefix) && len(out) < maxCandidates {
			out = append(out, c)
		}
	}
	return out
}
