package status

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/cairnfs/cairn/serve/runlog"
)

// The chart's frame, in SVG user units (it scales to the page's width).
const (
	chartW, chartH = 800.0, 260.0
	padL, padR     = 72.0, 52.0
	padT, padB     = 16.0, 40.0
	plotW, plotH   = chartW - padL - padR, chartH - padT - padB
	// maxPoints bounds the points drawn, whatever the series holds.
	maxPoints = 1000
)

// chart is what the page's SVG draws: the stored bytes as an area on
// the left axis, the deduplication ratio as a line on the right one.
type chart struct {
	W, H           float64
	Left, Right    float64 // the plot's x range
	Top, Bottom    float64 // its y range
	MidX, MidY     float64 // its centre
	Samples        int
	Area, Line     string // path data
	Dots           []dot  // a single sample, drawn as dots
	YTicks, RTicks []tick // left (bytes) and right (dedup) axes
	XTicks         []tick
	LastStored     string
	LastDedup      string
}

type tick struct {
	Pos   float64 // y for the vertical axes, x for the time axis
	Label string
}

type dot struct {
	X, Y  float64
	Class string
}

// newChart draws series (in any order, with any values: what cannot be
// drawn is drawn as 0) in loc's time.
func newChart(series []runlog.Sample, loc *time.Location) chart {
	c := chart{W: chartW, H: chartH, Left: padL, Right: padL + plotW, Top: padT, Bottom: padT + plotH,
		MidX: padL + plotW/2, MidY: padT + plotH/2}
	s := thinned(series)
	c.Samples = len(s)
	if len(s) == 0 {
		return c
	}
	var maxBytes, maxDedup float64
	for _, x := range s {
		maxBytes = max(maxBytes, finite(float64(x.StoredBytes)))
		maxDedup = max(maxDedup, finite(x.Dedup()))
	}
	byteStep, dedupStep := byteTick(maxBytes), niceStep(max(maxDedup, 1)/4)
	maxBytes, maxDedup = 4*byteStep, 4*dedupStep
	t0, t1 := s[0].Time, s[len(s)-1].Time
	span := t1.Sub(t0)
	xOf := func(t time.Time) float64 {
		if span <= 0 {
			return padL + plotW/2
		}
		return padL + plotW*float64(t.Sub(t0))/float64(span)
	}
	yOf := func(v, top float64) float64 { return padT + plotH*(1-clamp(v/top)) }
	var area, line strings.Builder
	for i, x := range s {
		px := xOf(x.Time)
		ys, yd := yOf(float64(x.StoredBytes), maxBytes), yOf(x.Dedup(), maxDedup)
		if i == 0 {
			fmt.Fprintf(&area, "M%s,%s", num(px), num(c.Bottom))
			fmt.Fprintf(&line, "M%s,%s", num(px), num(yd))
		} else {
			fmt.Fprintf(&line, " L%s,%s", num(px), num(yd))
		}
		fmt.Fprintf(&area, " L%s,%s", num(px), num(ys))
		if len(s) == 1 {
			c.Dots = []dot{{px, ys, "stored"}, {px, yd, "dedup"}}
		}
	}
	fmt.Fprintf(&area, " L%s,%s Z", num(xOf(t1)), num(c.Bottom))
	c.Area, c.Line = area.String(), line.String()
	for i := range 5 {
		f := float64(i) / 4
		y := yOf(f, 1)
		c.YTicks = append(c.YTicks, tick{y, humanize.IBytes(uint64(float64(i) * byteStep))})
		c.RTicks = append(c.RTicks, tick{y, strconv.FormatFloat(float64(i)*dedupStep, 'g', 4, 64) + "×"})
	}
	c.XTicks = timeTicks(t0, t1, loc, xOf)
	last := s[len(s)-1]
	c.LastStored, c.LastDedup = size(last.StoredBytes), ratio(last.Dedup())
	return c
}

// thinned is series in time order, at most maxPoints of it (evenly
// picked, the newest kept).
func thinned(series []runlog.Sample) []runlog.Sample {
	s := slices.Clone(series)
	slices.SortStableFunc(s, func(a, b runlog.Sample) int { return a.Time.Compare(b.Time) })
	if len(s) <= maxPoints {
		return s
	}
	out := make([]runlog.Sample, 0, maxPoints)
	for i := range maxPoints {
		out = append(out, s[i*(len(s)-1)/(maxPoints-1)])
	}
	return out
}

// timeTicks labels the time axis at its ends and middle, with the time
// of day when the series spans less than three days.
func timeTicks(t0, t1 time.Time, loc *time.Location, xOf func(time.Time) float64) []tick {
	layout := "2006-01-02"
	if t1.Sub(t0) < 72*time.Hour {
		layout = "01-02 15:04"
	}
	if !t1.After(t0) {
		return []tick{{xOf(t0), t0.In(loc).Format(layout)}}
	}
	mid := t0.Add(t1.Sub(t0) / 2)
	var ticks []tick
	for _, t := range []time.Time{t0, mid, t1} {
		ticks = append(ticks, tick{xOf(t), t.In(loc).Format(layout)})
	}
	return ticks
}

// byteTick is the step of the bytes axis's four intervals for values up
// to top: 1, 2 or 5 times a power of ten of the binary unit (KiB, MiB,
// ...) that suits top, so that the labels read 0, 50 GiB, 100 GiB...
func byteTick(top float64) float64 {
	unit := 1.0
	for unit < 1<<60 && top >= unit*1024 {
		unit *= 1024
	}
	return max(niceStep(max(top, 1)/unit/4)*unit, 1)
}

// niceStep is the smallest of 1, 2, 5 times a power of ten at least
// raw (raw > 0).
func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}

func clamp(v float64) float64 {
	return min(max(finite(v), 0), 1)
}

func num(v float64) string {
	return strconv.FormatFloat(v, 'f', 1, 64)
}
