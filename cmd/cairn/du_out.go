package main

import (
	"bufio"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/usage"
	"github.com/dustin/go-humanize"
)

// duBytes are distinct chunks: how many, their plain and stored bytes.
type duBytes struct {
	Chunks  int64 `json:"chunks"`
	Logical int64 `json:"logical"`
	Stored  int64 `json:"stored"`
}

// duUsage is a snapshot's, a group's or the store's figures.
type duUsage struct {
	Total     duBytes `json:"total"`
	Unique    duBytes `json:"unique"`
	Shared    duBytes `json:"shared"`
	Files     int64   `json:"files"`
	FileBytes int64   `json:"file_bytes"`
	// Freed is unique stored bytes plus the files: what forgetting it
	// frees on disk (after gc).
	Freed int64 `json:"freed"`
}

type duSnapshot struct {
	Snapshot string `json:"snapshot"`
	Group    string `json:"group"`
	Finished bool   `json:"finished"`
	duUsage
	Error string `json:"error,omitempty"`
}

type duGroup struct {
	Group     string `json:"group"`
	Snapshots int    `json:"snapshots"`
	duUsage
}

type duStore struct {
	Snapshots int `json:"snapshots"`
	duUsage
	MissingChunks int64 `json:"missing_chunks"`
}

// duReport is what du prints with --json.
type duReport struct {
	StoredKnown bool         `json:"stored_known"`
	Snapshots   []duSnapshot `json:"snapshots"`
	Groups      []duGroup    `json:"groups"`
	Store       duStore      `json:"store"`
	Errors      []string     `json:"errors"`
}

func duBytesOf(b usage.Bytes) duBytes { return duBytes(b) }

func duUsageOf(u usage.Usage) duUsage {
	return duUsage{Total: duBytesOf(u.Total), Unique: duBytesOf(u.Unique), Shared: duBytesOf(u.Shared()),
		Files: u.Files, FileBytes: u.FileBytes, Freed: u.Freed()}
}

// duReportOf keeps the snapshots show selects and their groups.
func duReportOf(rep *usage.Report, show func(store.SnapshotInfo) bool) duReport {
	out := duReport{StoredKnown: rep.StoredKnown, Snapshots: []duSnapshot{}, Groups: []duGroup{}, Errors: []string{}}
	groups := map[store.Group]bool{}
	for _, s := range rep.Snapshots {
		if !show(s.SnapshotInfo) {
			continue
		}
		groups[s.Group] = true
		row := duSnapshot{Snapshot: s.String(), Group: s.Group.String(), Finished: s.Finished, duUsage: duUsageOf(s.Usage)}
		if s.Err != nil {
			row.Error = s.Err.Error()
		}
		out.Snapshots = append(out.Snapshots, row)
	}
	for _, g := range rep.Groups {
		if groups[g.Group] {
			out.Groups = append(out.Groups, duGroup{Group: g.String(), Snapshots: g.Snapshots, duUsage: duUsageOf(g.Usage)})
		}
	}
	out.Store = duStore{Snapshots: len(rep.Snapshots), duUsage: duUsageOf(rep.All), MissingChunks: rep.Missing}
	for _, err := range rep.Errors {
		out.Errors = append(out.Errors, err.Error())
	}
	return out
}

// size is the size column: stored bytes, or logical where stored sizes
// are not known.
func (r duReport) size(b duBytes) string {
	if r.StoredKnown {
		return humanize.IBytes(uint64(b.Stored))
	}
	return humanize.IBytes(uint64(b.Logical))
}

func (r duReport) line(u duUsage) string {
	s := fmt.Sprintf("total %s, unique %s, shared %s", r.size(u.Total), r.size(u.Unique), r.size(u.Shared))
	if r.StoredKnown {
		s += fmt.Sprintf(" (logical %s, unique %s)", humanize.IBytes(uint64(u.Total.Logical)), humanize.IBytes(uint64(u.Unique.Logical)))
	}
	return s + fmt.Sprintf(", files %s", humanize.IBytes(uint64(u.FileBytes)))
}

// printDu writes the text listing: each group's line, its snapshots
// (unless groupsOnly), the store's line and the errors.
func printDu(w io.Writer, r duReport, groupsOnly bool) error {
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
		fmt.Fprintf(out, "group %s: %d snapshot(s), %s\n", g.Group, g.Snapshots, r.line(g.duUsage))
		if groupsOnly {
			continue
		}
		j := i
		for j < len(r.Snapshots) && r.Snapshots[j].Group == g.Group {
			j++
		}
		printDuRows(out, r, r.Snapshots[i:j])
		i = j
	}
	fmt.Fprintf(out, "store: %d snapshot(s), %d chunk(s), %s", r.Store.Snapshots, r.Store.Total.Chunks, r.line(r.Store.duUsage))
	if r.Store.MissingChunks > 0 {
		fmt.Fprintf(out, ", %d chunk(s) missing", r.Store.MissingChunks)
	}
	fmt.Fprintln(out)
	if len(r.Errors) > 0 {
		fmt.Fprintln(out, "errors:")
		for _, e := range r.Errors {
			fmt.Fprintf(out, "  %s\n", escapeText(e))
		}
	}
	return out.Flush()
}

// printDuRows writes one group's snapshots, sizes aligned right, names
// left.
func printDuRows(w io.Writer, r duReport, rows []duSnapshot) {
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
		printDuRow(tw, r, s, fmt.Sprintf("%-*s", width, names[i]))
	}
	tw.Flush()
}

func printDuRow(tw *tabwriter.Writer, r duReport, s duSnapshot, name string) {
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, r.size(s.Total), r.size(s.Unique), r.size(s.Shared),
		humanize.IBytes(uint64(s.Total.Logical)), humanize.IBytes(uint64(s.Unique.Logical)), humanize.IBytes(uint64(s.FileBytes)))
}
