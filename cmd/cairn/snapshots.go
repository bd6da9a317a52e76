package main

import (
	"bufio"
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

const notVerified = "not verified"

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
			var rows []snapshotRow
			var empty []string
			if len(args) > 0 {
				rows, empty, err = listSelected(a.ctx, a, s, ns, args)
			} else {
				top := store.NS(strings.Trim(ns, "/"))
				if rows, err = listSnapshots(a.ctx, a, s, top); err == nil {
					empty, err = emptyGroups(s, top, rows)
				}
			}
			if err != nil {
				return err
			}
			switch {
			case asJSON && groups:
				return printJSON(a, withEmpty(groupRows(rows), empty))
			case asJSON:
				if rows == nil {
					rows = []snapshotRow{}
				}
				return printJSON(a, rows)
			}
			if err := printSnapshots(a, rows, empty, groups); err != nil {
				return err
			}
			a.printLastGC(s)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&groups, "groups", false, "list the groups only (count, newest, logical and stored size)")
	cmd.Flags().StringVar(&ns, "ns", "", "only this namespace and those below it")
	return cmd
}

func listSnapshots(ctx context.Context, a *app, s *store.Store, top store.NS) ([]snapshotRow, error) {
	sel, err := store.ParseSelector(top, nil)
	if err != nil {
		return nil, usageErr("--ns: %v", err)
	}
	idx := s.OpenSnapIndex(a.logger)
	var rows []snapshotRow
	for si, err := range s.Walk(ctx, sel) {
		if err != nil {
			return nil, err
		}
		rows = append(rows, snapshotRowOf(idx, si))
	}
	idx.Save(top != "")
	return rows, nil
}

func snapshotRowOf(idx *store.SnapIndex, si store.SnapshotInfo) snapshotRow {
	r := snapshotRow{Snapshot: si.String(), Group: si.Group.String(), Time: si.TimeString(),
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
	r.Verified = notVerified
	if sum.HasVerify {
		r.Verify, r.Verified = sum.Verify, sum.Verify
	}
	r.StoredSize, r.Notes = sum.StoredSize, sum.Notes
	return r
}

// firstLine is the first line of s, cut to n runes (… marks a cut).
var firstLine = store.FirstLine

// groupRow sums one group's snapshots (snapshots --groups).
type groupRow struct {
	Group     string `json:"group"`
	Snapshots int    `json:"snapshots"`
	Newest    string `json:"newest,omitempty"` // time of the newest finished snapshot
	Size      uint64 `json:"size"`             // sum of the archives' sizes
	// StoredSize sums the recorded chunk_upload_stats compressed_size;
	// StoredUnknown counts the finished snapshots without a record.
	StoredSize    int64 `json:"stored_size"`
	StoredUnknown int   `json:"stored_unknown"`
	recorded      int   // finished snapshots with a record
}

// groupRows sums rows (sorted by group) group by group.
func groupRows(rows []snapshotRow) []groupRow {
	out := []groupRow{}
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Group != r.Group {
			out = append(out, groupRow{Group: r.Group})
		}
		g := &out[len(out)-1]
		g.Snapshots++
		if !r.Finished || r.Error != "" {
			continue
		}
		g.Newest, g.Size = r.Time, g.Size+r.Size
		if r.StoredSize != nil {
			g.StoredSize += *r.StoredSize
			g.recorded++
		} else {
			g.StoredUnknown++
		}
	}
	return out
}

func (g groupRow) stored() string {
	switch {
	case g.StoredUnknown == 0:
		return humanize.IBytes(uint64(g.StoredSize))
	case g.recorded == 0:
		return "unknown"
	}
	return fmt.Sprintf("%s + unknown (%d snapshot(s) without upload stats)", humanize.IBytes(uint64(g.StoredSize)), g.StoredUnknown)
}

func (g groupRow) String() string {
	newest := g.Newest
	if newest == "" {
		newest = "none finished"
	}
	// "stored" sums what its backups added to the store: a group whose
	// chunks other groups stored first adds little or nothing
	return fmt.Sprintf("%s: %d snapshot(s), newest %s, %s logical, %s newly stored by its backups", g.Group, g.Snapshots, newest,
		humanize.IBytes(g.Size), g.stored())
}

// printSnapshots writes the text listing through one buffer: tabwriter
// writes each cell and its padding separately, which unbuffered was a
// system call per cell (about 140,000 for 10,000 snapshots).
func printSnapshots(a *app, rows []snapshotRow, empty []string, groupsOnly bool) error {
	if len(rows) == 0 && len(empty) == 0 {
		fmt.Fprintln(a.stdout, "no snapshots")
		return nil
	}
	out := bufio.NewWriter(a.stdout)
	groups := groupRows(rows)
	if groupsOnly {
		for _, g := range groups {
			fmt.Fprintf(out, "group %s\n", g)
		}
		printEmptyGroups(out, empty, true)
		return out.Flush()
	}
	i := 0
	for gi, g := range groups {
		if gi > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "group %s\n", g)
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  SNAPSHOT\tSIZE\tARCHIVES\tPROTECTED\tENCRYPTED\tSTATE\tNOTES")
		for ; i < len(rows) && rows[i].Group == g.Group; i++ {
			printSnapshotRow(tw, rows[i])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	printEmptyGroups(out, empty, len(groups) == 0)
	return out.Flush()
}

func printSnapshotRow(tw *tabwriter.Writer, r snapshotRow) {
	state := "verify " + quoteName(r.Verified) // a manifest's verify_state.state
	switch {
	case !r.Finished:
		state = "UNFINISHED (no manifest)"
	case r.Error != "":
		state = "ERROR: " + escapeText(r.Error)
	case r.Verified == notVerified:
		state = notVerified
	}
	size := "-"
	if r.Finished {
		size = humanize.IBytes(r.Size)
	}
	prot := "-"
	if r.Protect {
		prot = "yes"
	}
	notes := r.Notes
	if notes == "" {
		notes = "-"
	}
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Snapshot, size, joinNames(r.Archives), prot, r.encrypted(), state, quoteName(notes))
}

// encrypted is the ENCRYPTED column: "-" for a plain snapshot, else the
// crypt mode's word and the key's short fingerprint.
func (r snapshotRow) encrypted() string {
	var word string
	switch r.CryptMode {
	case "", store.CryptNone:
		return "-"
	case store.CryptEncrypt:
		word = "key"
	default:
		word = r.CryptMode
	}
	if r.KeyFingerprint == "" {
		return quoteName(word) + " (no fingerprint)"
	}
	return quoteName(word) + " " + quoteName(r.KeyFingerprint)
}

// joinNames joins a manifest's archive names, each quoted if need be.
func joinNames(n []string) string {
	if len(n) == 0 {
		return "-"
	}
	q := make([]string, len(n))
	for i, s := range n {
		q[i] = quoteName(s)
	}
	return strings.Join(q, ",")
}
