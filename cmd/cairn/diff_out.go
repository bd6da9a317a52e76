package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
)

// diffOutput writes diff's changes as they are found: text lines, or one
// JSON document whose "changes" list is written element by element.
type diffOutput struct {
	a    *app
	json bool
	w    *bufio.Writer
	rep  diffReport // totals and archives; Changes stay nil
	n    int        // changes written
}

func newDiffOutput(a *app, asJSON bool, rep diffReport) *diffOutput {
	o := &diffOutput{a: a, json: asJSON, w: bufio.NewWriter(a.stdout), rep: rep}
	rep.Archives = []diffArchive{}
	if asJSON {
		o.w.WriteString("{\n  \"changes\": [")
	}
	return o
}

func (o *diffOutput) count(change string) {
	switch change {
	case "added":
		o.rep.Added++
	case "removed":
		o.rep.Removed++
	default:
		o.rep.Changed++
	}
}

// change writes one changed path.
func (o *diffOutput) change(c diffChange) error {
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
		line := mark + " " + quoteName(c.Archive+c.Path)
		if mark == "" {
			line = "M " + quoteName(c.Archive+c.Path) + " (" + strings.Join(c.Reasons, ", ") + ")"
		}
		o.w.WriteString(line + "\n")
	}
	o.n++
	if o.w.Buffered() > 0 && o.n%256 == 0 {
		return o.w.Flush()
	}
	return nil
}

// archive records one compared archive. Its own line (text) is there for
// archives in one snapshot only and for changed images and blobs; a file
// archive's changes are its paths.
func (o *diffOutput) archive(r diffArchive) error {
	o.rep.Archives = append(o.rep.Archives, r)
	if r.Kind != "file_archive" || r.Status == "added" || r.Status == "removed" {
		switch r.Status {
		case "added", "removed", "changed":
			o.count(r.Status)
		}
	}
	if line := diffText(r, o.rep.From, o.rep.To); line != "" && !o.json && r.Status != "unchanged" {
		o.w.WriteString(line + "\n")
	}
	return nil
}

// finish ends the output with the totals.
func (o *diffOutput) finish() error {
	r := o.rep
	if o.json {
		if r.Archives == nil {
			r.Archives = []diffArchive{}
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
	} else if !o.a.quiet {
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

// abort writes out what was found before a failure.
func (o *diffOutput) abort() { o.w.Flush() }
