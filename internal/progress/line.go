package progress

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/dustin/go-humanize"
)

// fit cuts s to width columns (0: unknown, no cut), so that the line
// never wraps and \r keeps redrawing it in place.
func fit(s string, width int) string {
	if width <= 1 {
		return s
	}
	r := []rune(s)
	if len(r) < width {
		return s
	}
	return string(r[:width-1])
}

// shorten cuts s to n runes (at least 8) by putting "…" for its middle.
func shorten(s string, n int) string {
	n = max(n, 8)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}

// Meter turns samples into a line; it remembers recent samples for the
// rate. It is used by one goroutine.
type Meter struct {
	start time.Time
	hist  []point
}

type point struct {
	at    time.Time
	bytes int64
}

// NewMeter starts a meter at start.
func NewMeter(start time.Time) *Meter { return &Meter{start: start} }

// rate returns bytes per second over the last rateWindow, and whether
// enough time or bytes have passed for it to mean something.
func (m *Meter) rate(n int64, now time.Time) (float64, bool) {
	m.hist = append(m.hist, point{now, n})
	for len(m.hist) > 2 && now.Sub(m.hist[1].at) >= rateWindow {
		m.hist = m.hist[1:]
	}
	el := now.Sub(m.start)
	if el < rateAfter && (n < rateBytes || el < 250*time.Millisecond) {
		return 0, false
	}
	from := point{m.start, 0}
	if now.Sub(m.start) > rateWindow && len(m.hist) > 1 {
		from = m.hist[0]
	}
	d := now.Sub(from.at).Seconds()
	if d <= 0 {
		return 0, false
	}
	return float64(n-from.bytes) / d, true
}

var spinner = []string{"-", "\\", "|", "/"}

// Line renders a sample; frame >= 0 draws a terminal's spinner or bar,
// frame < 0 a plain line with the elapsed time.
func (m *Meter) Line(label string, s Sample, now time.Time, frame int) string {
	return m.FitLine(label, s, now, frame, 0)
}

// FitLine is Line cut to width columns (0: no cut): the label, then
// the archive's name give way first (cut in the middle), so that the
// figures stay; then the end of the line.
func (m *Meter) FitLine(label string, s Sample, now time.Time, frame, width int) string {
	pre, body := m.parts(s, now, frame)
	arch := ""
	if s.Archive != "" {
		arch = " " + termsafe.Quote(s.Archive)
	}
	if width > 1 {
		room := width - 1 - utf8.RuneCountInString(pre+":"+body)
		if n := room - utf8.RuneCountInString(arch); n >= 8 || arch == "" {
			label = shorten(label, n)
		} else {
			label, arch = shorten(label+arch, room), ""
		}
	}
	return fit(pre+label+arch+":"+body, width)
}

// parts renders what goes before the label (a spinner or bar) and after
// it. A display that counts only items (no bytes) shows neither bytes
// nor a byte rate.
func (m *Meter) parts(s Sample, now time.Time, frame int) (pre, body string) {
	itemsOnly := s.Total <= 0 && s.Bytes == 0 && s.ItemsName != ""
	n, total := s.Bytes, s.Total
	if s.Total <= 0 && s.ItemsName != "" { // the bar counts items when only their total is known
		n, total = s.Items, s.ItemsTotal
	}
	switch {
	case frame >= 0 && total > 0:
		pre = bar(n, total, 20) + " "
	case frame >= 0:
		pre = spinner[frame%len(spinner)] + " "
	}
	var b strings.Builder
	sep := " "
	if !itemsOnly {
		fmt.Fprintf(&b, " %s", humanize.IBytes(uint64(max(s.Bytes, 0))))
		if s.Total > 0 {
			fmt.Fprintf(&b, " of %s%s (%.1f%%)", approx(s.TotalApprox), humanize.IBytes(uint64(s.Total)), percent(s.Bytes, s.Total))
		}
		sep = ", "
	}
	if s.ItemsName != "" {
		fmt.Fprintf(&b, "%s%d", sep, s.Items)
		if s.ItemsTotal > 0 {
			fmt.Fprintf(&b, " of %s%d", approx(s.ItemsApprox), s.ItemsTotal)
		}
		b.WriteString(" " + s.ItemsName)
	}
	r, ok := m.rate(s.Bytes, now)
	if ok && !itemsOnly {
		fmt.Fprintf(&b, ", %.1f MB/s", max(r, 0)/1e6)
	}
	if eta, est, known := etaOf(s, r, now.Sub(m.start)); ok && known {
		fmt.Fprintf(&b, ", ETA %s%s", approx(est), eta)
	}
	if frame < 0 {
		fmt.Fprintf(&b, ", %s elapsed", now.Sub(m.start).Round(time.Second))
	}
	if s.Note != "" {
		b.WriteString(", " + s.Note)
	}
	return pre, b.String()
}

// approx marks an estimate.
func approx(estimate bool) string {
	if estimate {
		return "~"
	}
	return ""
}

// etaOf estimates the time left from the byte rate, or, when only the
// items' total is known, from the items done so far; est: from an
// estimated total. Past an estimated total the time left is unknown.
func etaOf(s Sample, rate float64, el time.Duration) (eta time.Duration, est, known bool) {
	var sec float64
	switch {
	case s.Total > 0 && rate > 0 && (!s.TotalApprox || s.Bytes < s.Total):
		sec, est = float64(max(s.Total-s.Bytes, 0))/rate, s.TotalApprox
	case s.Total <= 0 && s.ItemsTotal > 0 && s.Items > 0 && (!s.ItemsApprox || s.Items < s.ItemsTotal):
		sec, est = el.Seconds()*float64(max(s.ItemsTotal-s.Items, 0))/float64(s.Items), s.ItemsApprox
	default:
		return 0, false, false
	}
	return time.Duration(sec * float64(time.Second)).Round(time.Second), est, true
}

func percent(n, total int64) float64 {
	return min(100*float64(n)/float64(total), 100)
}

// bar draws [=====>    ] of width cells.
func bar(n, total int64, width int) string {
	full := int(float64(width) * percent(n, total) / 100)
	s := strings.Repeat("=", full)
	if full < width {
		s += ">" + strings.Repeat(" ", width-full-1)
	}
	return "[" + s + "]"
}

// MBps is the rate of bytes in d, in MB (10^6 bytes) a second.
func MBps(bytes int64, d time.Duration) float64 {
	return float64(bytes) / 1e6 / max(d.Seconds(), 1e-9)
}
