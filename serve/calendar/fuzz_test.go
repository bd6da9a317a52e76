package calendar

import (
	"errors"
	"testing"
	"time"
)

// matches tells whether the wall clock of t is one of e's times.
func (e *Event) matches(t time.Time) bool {
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return e.year.has(y) && e.month.has(int(m)) && e.day.has(d) &&
		e.weekday.has(isoWeekday(t.Weekday())) &&
		e.hour.has(h) && e.minute.has(mi) && e.second.has(s)
}

// FuzzParse: Parse never panics, fails only with a *SyntaxError, and an
// event it returns writes itself (String) as a spec that parses to the
// same event; Next gives a time after its argument that the event
// matches, or zero. Seeds replay with every go test.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"daily", "hourly", "minutely", "weekly", "monthly", "yearly", "annually",
		"quarterly", "semiannually", "semi-annually", "mon..fri 02:00",
		"sat *-*-1..7 15:00", "*:0/15", "*-*-01", "02:00", "sat,sun 10:00",
		"Monday 12:00", "*/5:*/7:*/11", "2026-01..03,06-1/5 8..18/2:30:05",
		"*-02-29", "*-02-30", "mon *-02-29", "1969-01-01", "2199-12-31 23:59:59",
		"fri..mon", "*:0/0", "99999:00", "1:2:3:4", "12:00 utc", "", "mon..",
		"..fri", "*/", "/5:00", "1..:00", "-", ":", ",", "*-*-*,*", "\xff",
	} {
		f.Add(s)
	}
	berlin := loadLocation(f, "Europe/Berlin")
	ny := loadLocation(f, "America/New_York")
	afters := []time.Time{
		time.Date(2026, 12, 5, 8, 17, 0, 0, time.UTC),
		time.Date(2026, 10, 25, 2, 30, 0, 0, berlin),
		time.Date(2026, 3, 8, 1, 59, 59, 999, ny),
		time.Date(2199, 12, 31, 23, 59, 59, 0, time.UTC),
		{},
	}
	f.Fuzz(func(t *testing.T, spec string) {
		e, err := Parse(spec)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q): %v is not a *SyntaxError", spec, err)
			}
			return
		}
		again, err := Parse(e.String())
		if err != nil || again.String() != e.String() {
			t.Fatalf("Parse(%q) is %q, which parses to %v, %v", spec, e.String(), again, err)
		}
		for _, after := range afters {
			next := e.Next(after)
			if next.IsZero() {
				continue
			}
			if !next.After(after) || next.After(after.AddDate(SearchYears+1, 0, 0)) {
				t.Fatalf("%q.Next(%s) = %s", spec, after, next)
			}
			if !e.matches(next) || next.Location() != after.Location() {
				t.Fatalf("%q.Next(%s) = %s, which the event does not match", spec, after, next)
			}
		}
	})
}
