package cli

import (
	"github.com/cairnfs/cairn/store/snaplist"
)

// qualifyRef returns snapshot reference arg taken in namespace ns (--ns)
// as one reference naming its namespace, or a usage error.
func qualifyRef(ns, arg string) (string, error) {
	r, err := parseRefIn(ns, arg)
	if err != nil {
		return "", err
	}
	return r.String(), nil
}

// lsArchives lists the archives of snapshot ref.
func (a *app) lsArchives(ref string, asJSON bool) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	snap, m, err := a.resolveSnapshot(s, ref)
	if err != nil {
		return err
	}
	rows := snaplist.ArchiveRows(m)
	if asJSON {
		if rows == nil {
			rows = []snaplist.ArchiveRow{}
		}
		return printJSON(a, snaplist.SnapshotArchives{Snapshot: snap.String(), Archives: rows})
	}
	return snaplist.WriteArchives(a.stdout, rows)
}
