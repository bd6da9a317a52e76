package notify

import (
	"bytes"
	"fmt"
	"mime/quotedprintable"
	"strings"
	"time"

	"github.com/cairnfs/cairn/serve/runlog"
)

// mailBody is the text of a mail about ev: what happened, then the
// run's or the group's details, then the run's log tail.
func mailBody(ev runlog.Event, now time.Time) string {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-12s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	b.WriteString(ev.Summary + "\n\n")
	line("Event", "%s", ev.Kind)
	line("Time", "%s", stamp(ev.Time))
	line("Store", "%s", ev.Store)
	line("Host", "%s", ev.Host)
	if r := ev.Run; r != nil {
		b.WriteString("\n")
		line("Job", "%s (%s)", r.Job, r.Kind)
		if r.UPID != "" {
			line("UPID", "%s", r.UPID)
		}
		line("Due", "%s", stamp(r.Due))
		line("Started", "%s", stamp(r.Start))
		if !r.End.IsZero() {
			line("Ended", "%s", stamp(r.End))
		}
		line("Duration", "%s", r.Duration(now).Round(time.Second))
		line("Result", "%s", r.Result)
		if r.Error != "" {
			line("Error", "%s", r.Error)
		}
		line("Bytes", "%d", r.Bytes)
		line("Chunks", "%d", r.Chunks)
		if r.CatchUp {
			b.WriteString("This run caught up with times missed while the daemon was down.\n")
		}
		if len(r.LogTail) > 0 {
			b.WriteString("\nThe job's last log lines:\n\n")
			for _, l := range r.LogTail {
				b.WriteString("  " + l + "\n")
			}
		}
	}
	if g := ev.Group; g != nil {
		b.WriteString("\n")
		line("Group", "%s", g.Name())
		if g.Newest.IsZero() {
			line("Newest", "none finished")
		} else {
			line("Newest", "%s (%s ago)", stamp(g.Newest), now.Sub(g.Newest).Round(time.Minute))
		}
		line("Snapshots", "%d", g.Snapshots)
		if g.MaxAge > 0 {
			line("Maximum age", "%s", g.MaxAge)
		}
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

// quotedPrintable encodes text for a text/plain part: lines of any
// length and any bytes travel safely, with the LF line ends that
// sendmail reads.
func quotedPrintable(text string) []byte {
	var b bytes.Buffer
	w := quotedprintable.NewWriter(&b)
	_, _ = w.Write([]byte(text))
	_ = w.Close()
	return bytes.ReplaceAll(b.Bytes(), []byte("\r\n"), []byte("\n"))
}
