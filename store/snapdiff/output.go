package snapdiff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cairnfs/cairn/internal/termsafe"
)

// Writer writes a diff's changes as they are found: text lines, or one
// JSON document whose "changes" list is written element by element.
type Writer struct {
	json  bool
	quiet bool
	w     *bufio.Writer
	rep   Report // totals and archives; Changes stay nil
	n     int    // changes written
}

// NewWriter starts the output of a diff whose head (From, To, Content) is
// rep on w: text lines, or (asJSON) one JSON document; quiet leaves out
// the text totals.
func NewWriter(w io.Writer, asJSON, quiet bool, rep Report) *Writer {
	o := &Writer{json: asJSON, quiet: quiet, w: bufio.NewWriter(w), rep: rep}
	rep.Archives = []Archive{}
	if asJSON {
		o.w.WriteString("{\n  \"changes\": [")
	}
	return o
}

func (o *Writer) count(change string) {
	switch change {
	case "added":
		o.rep.Added++
	case "removed":
		o.rep.Removed++
	default:
		o.rep.Changed++
	}
}

// Change writes one changed path.
func (o *Writer) Change(c Change) error {
	o.count(c.Change)
	if o.json {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		if o.n > 0 {
			o.w.WriteByte(',')
		}
		o.w.WriteString("\n    ")
		o.w.Write(b)
	} else {
		mark := map[string]string{"added": "+", "removed": "-"}[c.Change]
		line := mark + " " + termsafe.Quote(c.Archive+c.Path)
		if mark == "" {
			line = "M " + termsafe.Quote(c.Archive+c.Path) + " (" + strings.Join(c.Reasons, ", ") + ")"
		}
		o.w.WriteString(line + "\n")
	}
	o.n++
	if o.w.Buffered() > 0 && o.n%256 == 0 {
		return o.w.Flush()
	}
	return nil
}

// Archive records one compared archive. Its own line (text) is there for
// archives in one snapshot only and for changed images and blobs; a file
// archive's changes are its paths.
func (o *Writer) Archive(r Archive) error {
	o.rep.Archives = append(o.rep.Archives, r)
	if r.Kind != "file_archive" || r.Status == "added" || r.Status == "removed" {
		switch r.Status {
		case "added", "removed", "changed":
			o.count(r.Status)
		}
	}
	if line := archiveText(r, o.rep.From, o.rep.To); line != "" && !o.json && r.Status != "unchanged" {
		o.w.WriteString(line + "\n")
	}
	return nil
}

// Finish ends the output with the totals.
func (o *Writer) Finish() error {
	r := o.rep
	if o.json {
		if r.Archives == nil {
			r.Archives = []Archive{}
		}
		tail, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		// tail is {"changes": null, "from": …}: continue the document
		// after the streamed list.
		_, rest, _ := strings.Cut(string(tail), "\"changes\": null,")
		if o.n > 0 {
			o.w.WriteString("\n  ")
		}
		o.w.WriteString("]," + rest + "\n")
	} else if !o.quiet {
		var unchanged int
		for _, ar := range r.Archives {
			if ar.Status == "unchanged" {
				unchanged++
			}
		}
		fmt.Fprintf(o.w, "%s -> %s: %d added, %d removed, %d changed (%d archives compared, %d unchanged", r.From, r.To,
			r.Added, r.Removed, r.Changed, len(r.Archives), unchanged)
		if r.Content {
			fmt.Fprint(o.w, "; content compared")
		}
		fmt.Fprintln(o.w, ")")
	}
	return o.w.Flush()
}

// Abort writes out what was found before a failure.
func (o *Writer) Abort() { o.w.Flush() }
