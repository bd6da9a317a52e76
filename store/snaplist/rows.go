package snaplist

import (
	"fmt"
	"io"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store"
)

// Row is one snapshot as cairn snapshots lists it (and --json prints it).
type Row struct {
	Snapshot string   `json:"snapshot"`
	Group    string   `json:"group"`
	Time     string   `json:"time"`
	Finished bool     `json:"finished"`
	Protect  bool     `json:"protected"`
	Size     uint64   `json:"size"`
	Archives []string `json:"archives"`
	Verify   string   `json:"verify_state,omitempty"`
	// Verified is "ok", "failed" or "not verified" (finished snapshots).
	Verified string `json:"verified,omitempty"`
	// StoredSize is chunk_upload_stats' compressed_size: what the
	// backup added to the store; nil when not recorded.
	StoredSize *int64 `json:"stored_size,omitempty"`
	Notes      string `json:"notes,omitempty"`
	// CryptMode is "none", "encrypt" or "sign-only" (finished
	// snapshots); KeyFingerprint the short fingerprint of the key its
	// manifest names.
	CryptMode      string `json:"crypt_mode,omitempty"`
	KeyFingerprint string `json:"key_fingerprint,omitempty"`
	Error          string `json:"error,omitempty"`
}

// NotVerified is Row.Verified of a finished snapshot never verified.
const NotVerified = "not verified"

// RowOf is the row of si, its manifest summarized through idx.
func RowOf(idx *store.SnapIndex, si store.SnapshotInfo) Row {
	r := Row{Snapshot: si.String(), Group: si.Group.String(), Time: si.TimeString(),
		Finished: si.Finished, Protect: si.Protected, Archives: []string{}}
	if !si.Finished {
		return r
	}
	sum, err := idx.Summary(si)
	if err != nil {
		r.Error = err.Error()
		if sum.Archives == nil {
			return r // the manifest did not decode
		}
	}
	r.Archives, r.Size, r.CryptMode, r.KeyFingerprint = sum.Archives, sum.Size, sum.CryptMode, sum.KeyFingerprint
	r.Verified = NotVerified
	if sum.HasVerify {
		r.Verify, r.Verified = sum.Verify, sum.Verify
	}
	r.StoredSize, r.Notes = sum.StoredSize, sum.Notes
	return r
}

// EmptyGroups are the groups of namespace top and below that hold no
// snapshot directory: a directory the mount shows, which the snapshot
// rows alone never named (issue 30, point 9). A backup or tape restore
// that fails removes a group it made and left empty; forgetting a
// group's last snapshot keeps the group (as PBS does), and a backup
// killed before its first snapshot leaves one, until forget --group.
func EmptyGroups(s *store.Store, top store.NS, rows []Row) ([]string, error) {
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

// writeEmptyGroups names each empty group and how to remove it.
func writeEmptyGroups(w io.Writer, empty []string, first bool) {
	for _, g := range empty {
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		fmt.Fprintf(w, "group %s: no snapshots (its last was forgotten, or its first backup killed; 'cairn forget --group %s' removes it)\n",
			termsafe.Quote(g), termsafe.Quote(g))
	}
}

// WithEmpty is Groups with the empty groups added, 0 snapshots each.
func WithEmpty(groups []Group, empty []string) []Group {
	for _, g := range empty {
		groups = append(groups, Group{Group: g})
	}
	return groups
}
