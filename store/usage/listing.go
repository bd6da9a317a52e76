package usage

import (
	"bufio"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
)

// ListingBytes are distinct chunks: how many, their plain and stored bytes.
type ListingBytes struct {
	Chunks  int64 `json:"chunks"`
	Logical int64 `json:"logical"`
	Stored  int64 `json:"stored"`
}

// ListingUsage is a snapshot's, a group's or the store's figures.
type ListingUsage struct {
	Total     ListingBytes `json:"total"`
	Unique    ListingBytes `json:"unique"`
	Shared    ListingBytes `json:"shared"`
	Files     int64        `json:"files"`
	FileBytes int64        `json:"file_bytes"`
	// Freed is unique stored bytes plus the files: what forgetting it
	// frees on disk (after gc).
	Freed int64 `json:"freed"`
}

// ListingSnapshot is one snapshot of a Listing.
type ListingSnapshot struct {
	Snapshot string `json:"snapshot"`
	Group    string `json:"group"`
	Finished bool   `json:"finished"`
	ListingUsage
	Error string `json:"error,omitempty"`
}

// ListingGroup is one group of a Listing.
type ListingGroup struct {
	Group     string `json:"group"`
	Snapshots int    `json:"snapshots"`
	ListingUsage
}

// ListingStore is the whole store in a Listing.
type ListingStore struct {
	Snapshots int `json:"snapshots"`
	ListingUsage
	MissingChunks int64 `json:"missing_chunks"`
}

// Listing is what cairn du prints: with --json as it is, else as
// WriteText writes it.
type Listing struct {
	StoredKnown bool              `json:"stored_known"`
	Snapshots   []ListingSnapshot `json:"snapshots"`
	Groups      []ListingGroup    `json:"groups"`
	Store       ListingStore      `json:"store"`
	Errors      []string          `json:"errors"`
}

func listingBytesOf(b Bytes) ListingBytes { return ListingBytes(b) }

func listingUsageOf(u Usage) ListingUsage {
	return ListingUsage{Total: listingBytesOf(u.Total), Unique: listingBytesOf(u.Unique), Shared: listingBytesOf(u.Shared()),
		Files: u.Files, FileBytes: u.FileBytes, Freed: u.Freed()}
}

// ListingOf is rep with the snapshots show selects and their groups.
func ListingOf(rep *Report, show func(store.SnapshotInfo) bool) Listing {
	out := Listing{StoredKnown: rep.StoredKnown, Snapshots: []ListingSnapshot{}, Groups: []ListingGroup{}, Errors: []string{}}
	groups := map[store.Group]bool{}
	for _, s := range rep.Snapshots {
		if !show(s.SnapshotInfo) {
			continue
		}
		groups[s.Group] = true
		row := ListingSnapshot{Snapshot: s.String(), Group: s.Group.String(), Finished: s.Finished, ListingUsage: listingUsageOf(s.Usage)}
		if s.Err != nil {
			row.Error = s.Err.Error()
		}
		out.Snapshots = append(out.Snapshots, row)
	}
	for _, g := range rep.Groups {
		if groups[g.Group] {
			out.Groups = append(out.Groups, ListingGroup{Group: g.String(), Snapshots: g.Snapshots, ListingUsage: listingUsageOf(g.Usage)})
		}
	}
	out.Store = ListingStore{Snapshots: len(rep.Snapshots), ListingUsage: listingUsageOf(rep.All), MissingChunks: rep.Missing}
	for _, err := range rep.Errors {
		out.Errors = append(out.Errors, err.Error())
	}
	return out
}

// size is the size column: stored bytes, or logical where stored sizes
// are not known.
func (r Listing) size(b ListingBytes) string {
	if r.StoredKnown {
		return humanize.IBytes(uint64(b.Stored))
	}
	return humanize.IBytes(uint64(b.Logical))
}

func (r Listing) line(u ListingUsage) string {
	s := fmt.Sprintf("total %s, unique %s, shared %s", r.size(u.Total), r.size(u.Unique), r.size(u.Shared))
	if r.StoredKnown {
		s += fmt.Sprintf(" (logical %s, unique %s)", humanize.IBytes(uint64(u.Total.Logical)), humanize.IBytes(uint64(u.Unique.Logical)))
	}
	return s + fmt.Sprintf(", files %s", humanize.IBytes(uint64(u.FileBytes)))
}

// WriteText writes the text listing: each group's line, its snapshots
// (unless groupsOnly), the store's line and the errors.
func (r Listing) WriteText(w io.Writer, groupsOnly bool) error {
	out := bufio.NewWriter(w)
	if !r.StoredKnown {
		fmt.Fprintln(out, "sizes are logical: chunk sizes are not read from object storage (a request each)")
	}
	if len(r.Snapshots) == 0 {
		fmt.Fprintln(out, "no snapshots")
	}
	i := 0
	for gi, g := range r.Groups {
		if gi > 0 && !groupsOnly {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "group %s: %d snapshot(s), %s\n", g.Group, g.Snapshots, r.line(g.ListingUsage))
		if groupsOnly {
			continue
		}
		j := i
		for j < len(r.Snapshots) && r.Snapshots[j].Group == g.Group {
			j++
		}
		writeRows(out, r, r.Snapshots[i:j])
		i = j
	}
	fmt.Fprintf(out, "store: %d snapshot(s), %d chunk(s), %s", r.Store.Snapshots, r.Store.Total.Chunks, r.line(r.Store.ListingUsage))
	if r.Store.MissingChunks > 0 {
		fmt.Fprintf(out, ", %d chunk(s) missing", r.Store.MissingChunks)
	}
	fmt.Fprintln(out)
	if len(r.Errors) > 0 {
		fmt.Fprintln(out, "errors:")
		for _, e := range r.Errors {
			fmt.Fprintf(out, "  %s\n", termsafe.Escape(e))
		}
	}
	return out.Flush()
}

// writeRows writes one group's snapshots, sizes aligned right, names
// left.
func writeRows(w io.Writer, r Listing, rows []ListingSnapshot) {
	names := make([]string, len(rows))
	width := len("SNAPSHOT")
	for i, s := range rows {
		names[i] = s.Snapshot
		if !s.Finished {
			names[i] += " (unfinished)"
		}
		if s.Error != "" {
			names[i] += " (ERROR: see below)"
		}
		width = max(width, len(names[i]))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tTOTAL\tUNIQUE\tSHARED\tLOGICAL\tUNIQUE LOGICAL\tFILES\t\n", width, "SNAPSHOT")
	for i, s := range rows {
		writeRow(tw, r, s, fmt.Sprintf("%-*s", width, names[i]))
	}
	tw.Flush()
}

func writeRow(tw *tabwriter.Writer, r Listing, s ListingSnapshot, name string) {
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, r.size(s.Total), r.size(s.Unique), r.size(s.Shared),
		humanize.IBytes(uint64(s.Total.Logical)), humanize.IBytes(uint64(s.Unique.Logical)), humanize.IBytes(uint64(s.FileBytes)))
}
