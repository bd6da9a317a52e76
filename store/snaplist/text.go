package snaplist

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
)

// Group sums one group's snapshots (snapshots --groups).
type Group struct {
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

// Groups sums rows (sorted by group) group by group.
func Groups(rows []Row) []Group {
	out := []Group{}
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Group != r.Group {
			out = append(out, Group{Group: r.Group})
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

func (g Group) stored() string {
	switch {
	case g.StoredUnknown == 0:
		return humanize.IBytes(uint64(g.StoredSize))
	case g.recorded == 0:
		return "unknown"
	}
	return fmt.Sprintf("%s + unknown (%d snapshot(s) without upload stats)", humanize.IBytes(uint64(g.StoredSize)), g.StoredUnknown)
}

func (g Group) String() string {
	newest := g.Newest
	if newest == "" {
		newest = "none finished"
	}
	// "stored" sums what its backups added to the store: a group whose
	// chunks other groups stored first adds little or nothing
	return fmt.Sprintf("%s: %d snapshot(s), newest %s, %s logical, %s newly stored by its backups", g.Group, g.Snapshots, newest,
		humanize.IBytes(g.Size), g.stored())
}

// Write writes the text listing of rows (sorted by group) and the
// empty groups to w through one buffer: tabwriter
// writes each cell and its padding separately, which unbuffered was a
// system call per cell (about 140,000 for 10,000 snapshots).
func Write(w io.Writer, rows []Row, empty []string, groupsOnly bool) error {
	if len(rows) == 0 && len(empty) == 0 {
		fmt.Fprintln(w, "no snapshots")
		return nil
	}
	out := bufio.NewWriter(w)
	groups := Groups(rows)
	if groupsOnly {
		for _, g := range groups {
			fmt.Fprintf(out, "group %s\n", g)
		}
		writeEmptyGroups(out, empty, true)
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
			writeRow(tw, rows[i])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	writeEmptyGroups(out, empty, len(groups) == 0)
	return out.Flush()
}

func writeRow(tw *tabwriter.Writer, r Row) {
	state := "verify " + termsafe.Quote(r.Verified) // a manifest's verify_state.state
	switch {
	case !r.Finished:
		state = "UNFINISHED (no manifest)"
	case r.Error != "":
		state = "ERROR: " + termsafe.Escape(r.Error)
	case r.Verified == NotVerified:
		state = NotVerified
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
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Snapshot, size, joinNames(r.Archives), prot, r.encrypted(), state, termsafe.Quote(notes))
}

// encrypted is the ENCRYPTED column: "-" for a plain snapshot, else the
// crypt mode's word and the key's short fingerprint.
func (r Row) encrypted() string {
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
		return termsafe.Quote(word) + " (no fingerprint)"
	}
	return termsafe.Quote(word) + " " + termsafe.Quote(r.KeyFingerprint)
}

// joinNames joins a manifest's archive names, each quoted if need be.
func joinNames(n []string) string {
	if len(n) == 0 {
		return "-"
	}
	q := make([]string, len(n))
	for i, s := range n {
		q[i] = termsafe.Quote(s)
	}
	return strings.Join(q, ",")
}
