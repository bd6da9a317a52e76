package status

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/cairnfs/cairn/serve/runlog"
)

// maxRuns bounds the rows of the recent runs' table.
const maxRuns = 200

// view is what the page shows, every text ready to print (the template
// escapes it).
type view struct {
	Store, Now, Started, Uptime string
	Stored, Logical, Dedup      string
	Chunks, Snapshots, LastGC   string
	Stale, Failed               int
	Groups                      []groupRow
	Jobs                        []jobRow
	Runs                        []runRow
	MoreRuns                    int
	Chart                       chart
}

type groupRow struct {
	Name, Newest, Age, Size, MaxAge string
	Snapshots                       int
	Stale, Watched                  bool
}

type jobRow struct {
	Job, Kind, Next string
	Last            *runRow // nil: never ran
}

type runRow struct {
	Job, Kind, Result, Start, Duration, Error string
	Failed, Running, CatchUp                  bool
}

// newView makes the page of st.
func newView(st runlog.Status) view {
	now := st.Now
	if now.IsZero() {
		now = time.Now()
	}
	loc := now.Location()
	cur := st.Current
	v := view{
		Store: st.Store, Now: stamp(now, loc), Started: stamp(st.Started, loc),
		Stored: size(cur.StoredBytes), Logical: size(cur.LogicalBytes), Dedup: ratio(cur.Dedup()),
		Chunks: count(cur.Chunks), Snapshots: count(cur.Snapshots), LastGC: stamp(st.LastGC, loc),
		Chart: newChart(st.Series, loc),
	}
	if !st.Started.IsZero() {
		v.Uptime = span(now.Sub(st.Started))
	}
	for _, g := range st.Groups {
		row := groupRow{Name: g.Name(), Snapshots: g.Snapshots, Size: size(g.Bytes), Newest: "none", Age: "-",
			Stale: g.Stale(now), Watched: g.MaxAge > 0}
		if !g.Newest.IsZero() {
			row.Newest, row.Age = stamp(g.Newest, loc), age(now.Sub(g.Newest))
		}
		if row.Watched {
			row.MaxAge = span(g.MaxAge)
		}
		if row.Stale {
			v.Stale++
		}
		v.Groups = append(v.Groups, row)
	}
	// Stale groups first, then by name.
	slices.SortStableFunc(v.Groups, func(a, b groupRow) int {
		if a.Stale != b.Stale {
			return boolCmp(b.Stale, a.Stale)
		}
		return cmp.Compare(a.Name, b.Name)
	})
	v.Jobs = jobRows(st, now, loc)
	for _, j := range v.Jobs {
		if j.Last != nil && j.Last.Failed {
			v.Failed++
		}
	}
	for i, r := range st.Runs {
		if i == maxRuns {
			v.MoreRuns = len(st.Runs) - maxRuns
			break
		}
		v.Runs = append(v.Runs, newRunRow(r, now, loc))
	}
	return v
}

// jobRows is a row per job, by name: its newest run and next due time.
func jobRows(st runlog.Status, now time.Time, loc *time.Location) []jobRow {
	rows := map[string]*jobRow{}
	for _, r := range st.Runs { // newest first
		if rows[r.Job] == nil {
			last := newRunRow(r, now, loc)
			rows[r.Job] = &jobRow{Job: r.Job, Kind: r.Kind, Next: "-", Last: &last}
		}
	}
	for job, due := range st.Next {
		if rows[job] == nil {
			rows[job] = &jobRow{Job: job, Next: "-"}
		}
		if !due.IsZero() {
			rows[job].Next = stamp(due, loc) + " (" + until(due.Sub(now)) + ")"
		}
	}
	out := make([]jobRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b jobRow) int { return cmp.Compare(a.Job, b.Job) })
	return out
}

func newRunRow(r runlog.Run, now time.Time, loc *time.Location) runRow {
	row := runRow{Job: r.Job, Kind: r.Kind, Result: string(r.Result), Start: stamp(r.Start, loc), Error: r.Error,
		Failed: r.Result == runlog.ResultFailed, Running: r.Result == runlog.ResultRunning, CatchUp: r.CatchUp, Duration: "-"}
	if !r.Start.IsZero() {
		row.Duration = span(max(r.Duration(now), 0))
	}
	if len(row.Error) > 500 {
		row.Error = strings.ToValidUTF8(row.Error[:500], "") + "…"
	}
	return row
}

func stamp(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "never"
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

// span is d as a person reads it: "42s", "12m 5s", "3h 12m", "2d 4h".
func span(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < 0:
		return "-" + span(-d)
	case d < time.Minute:
		return fmt.Sprintf("%ds", int64(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int64(d/time.Minute), int64(d%time.Minute/time.Second))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", int64(d/time.Hour), int64(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd %dh", int64(d/(24*time.Hour)), int64(d%(24*time.Hour)/time.Hour))
}

// age is how long ago something was (d > 0) or that it is in the future.
func age(d time.Duration) string {
	if d < 0 {
		return "in the future (" + span(-d) + ")"
	}
	return span(d) + " ago"
}

func until(d time.Duration) string {
	if d < 0 {
		return "overdue by " + span(-d)
	}
	return "in " + span(d)
}

func size(b int64) string {
	if b < 0 {
		return "-"
	}
	return humanize.IBytes(uint64(b))
}

func count(n int64) string {
	return humanize.Comma(n)
}

func ratio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
		return "-"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
