package restore

import (
	"fmt"
	"io"
	"time"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/internal/termsafe"
)

// ImageSummary is what an image (or blob) restore reports: as text
// (WriteText) or JSON.
type ImageSummary struct {
	Snapshot  string   `json:"snapshot"`
	Archive   string   `json:"archive"`
	Target    string   `json:"target"`
	Bytes     int64    `json:"bytes"`
	ZeroBytes int64    `json:"zero_bytes"`
	Seconds   float64  `json:"seconds"`
	MBps      float64  `json:"mb_per_s"`
	Damaged   []Damage `json:"damaged"`
	// Interrupted by a signal: what the target holds (see docs/json.md).
	Interrupted bool   `json:"interrupted,omitempty"`
	Left        string `json:"left,omitempty"`
}

// TreeSummary is what a file archive restore reports.
type TreeSummary struct {
	Snapshot  string      `json:"snapshot"`
	Archive   string      `json:"archive"`
	Path      string      `json:"path,omitempty"`
	Target    string      `json:"target"`
	Files     int64       `json:"files"`
	Dirs      int64       `json:"dirs"`
	Others    int64       `json:"others"`
	Bytes     int64       `json:"bytes"`
	ZeroBytes int64       `json:"zero_bytes"`
	Seconds   float64     `json:"seconds"`
	MBps      float64     `json:"mb_per_s"`
	Failed    []PathError `json:"failed"`
	Include   []string    `json:"include,omitempty"`
	Exclude   []string    `json:"exclude,omitempty"`
	// An interrupted restore: where the walk stopped and the marker
	// file it left in the target directory.
	Interrupted bool   `json:"interrupted,omitempty"`
	StoppedAt   string `json:"stopped_at,omitempty"`
	Marker      string `json:"marker,omitempty"`
	Removed     bool   `json:"removed,omitempty"`
}

// NewTreeSummary is the summary of the restore of path (of archive of
// snapshot) into target that rep tells of, which took el.
func NewTreeSummary(rep *TreeReport, snapshot, archive, path, target string, include, exclude []string, el time.Duration) TreeSummary {
	sum := TreeSummary{Snapshot: snapshot, Archive: archive, Path: path, Target: target, Files: rep.Files,
		Dirs: rep.Dirs, Others: rep.Others, Bytes: rep.Bytes, ZeroBytes: rep.ZeroBytes, Seconds: el.Seconds(),
		MBps: progress.MBps(rep.Bytes, el), Failed: rep.Failed, Include: include, Exclude: exclude,
		StoppedAt: rep.StoppedAt, Marker: rep.Marker, Removed: rep.Removed}
	if sum.Failed == nil {
		sum.Failed = []PathError{}
	}
	return sum
}

// WriteText writes the damaged ranges and, when ok, the completion line.
func (s ImageSummary) WriteText(out io.Writer, ok bool) {
	for _, d := range s.Damaged {
		fmt.Fprintf(out, "damaged: offset %d length %d chunk %s: %s\n", d.Offset, d.Length, d.Digest, termsafe.Escape(fmt.Sprint(d.Err)))
	}
	if ok {
		fmt.Fprintf(out, "restore complete (bytes=%d, zeroes=%d, duration=%.2fs, speed=%.2fMB/s)\n",
			s.Bytes, s.ZeroBytes, s.Seconds, s.MBps)
	}
}

// TreeTotal is what a tree restore's display knows ahead: the regular
// files of the whole archive (no --path, --include or --exclude), counted
// from its stat table; 0: unknown (no stat table: a single stream, an
// archive made by PBS). Its content bytes are not known ahead: the
// payload stream's size also holds the parts of reused chunks no file
// uses (metadata mode), often a third more.
type TreeTotal struct {
	Archive string
	Files   int64
}

// Sample is the display of a tree restore: no zeroes (all-zero blocks of
// files stay holes, which says little of a tree).
func (t TreeTotal) Sample(st *Stats) progress.Sample {
	return progress.Sample{Archive: t.Archive, Bytes: st.Bytes.Load(), Items: st.Files.Load(), ItemsTotal: t.Files,
		ItemsName: "files"}
}
