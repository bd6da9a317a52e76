package cli

import (
	"log/slog"

	"github.com/cairnfs/cairn/internal/progress"
)

// display is a progress display; Stop ends it.
type display interface{ Stop() }

type noProgress struct{}

func (noProgress) Stop() {}

// startProgress is how every command shows progress on stderr: label,
// bytes done of total (<= 0: unknown), and a note from get. -q shows
// nothing. Stop it before printing a summary.
func (a *app) startProgress(label string, total int64, get func() (int64, string)) display {
	return a.showProgress(label, func() progress.Sample {
		n, note := get()
		return progress.Sample{Bytes: n, Total: total, Note: note}
	})
}

// showProgress is startProgress for displays that count items too or
// whose total changes (the jobs'). -q shows nothing.
func (a *app) showProgress(label string, sample func() progress.Sample) display {
	if a.quiet {
		return noProgress{}
	}
	p := progress.New(a.stderr, label, sample)
	if a.logFormat == "json" { // plain lines would break a stream of JSON records
		p.SetPlain(func(s progress.Sample, line string) {
			a.newLogger(slog.LevelInfo).Info("progress", "what", label, "bytes", s.Bytes, "total", s.Total,
				"items", s.Items, "items_total", s.ItemsTotal, "note", s.Note, "line", line)
		})
	}
	return p.Start()
}
