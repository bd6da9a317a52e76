package calendar

import (
	"testing"
	"time"
)

func loadLocation(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("time zone %s: %v (tzdata is needed for this test)", name, err)
	}
	return loc
}

// TestDST: in Europe/Berlin and America/New_York, a time the wall clock
// skips when summer time begins does not happen that day, and a time it
// shows twice when summer time ends happens once, at its first instant.
func TestDST(t *testing.T) {
	berlin := loadLocation(t, "Europe/Berlin")
	ny := loadLocation(t, "America/New_York")
	for _, c := range []struct {
		name, spec string
		after      time.Time
		want       time.Time // in UTC
	}{
		// Berlin: 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET.
		{"berlin gap skipped that day", "02:30", time.Date(2026, 3, 28, 12, 0, 0, 0, berlin), utc(2026, 3, 30, 0, 30, 0)},
		{"berlin gap hourly", "*:30", time.Date(2026, 3, 29, 1, 45, 0, 0, berlin), utc(2026, 3, 29, 1, 30, 0)},
		{"berlin before gap", "01:59", time.Date(2026, 3, 29, 0, 0, 0, 0, berlin), utc(2026, 3, 29, 0, 59, 0)},
		{"berlin after gap", "03:00", time.Date(2026, 3, 29, 0, 0, 0, 0, berlin), utc(2026, 3, 29, 1, 0, 0)},
		{"berlin repeated first pass", "02:30", time.Date(2026, 10, 24, 12, 0, 0, 0, berlin), utc(2026, 10, 25, 0, 30, 0)},
		{"berlin repeated not twice", "02:30", utc(2026, 10, 25, 0, 30, 0).In(berlin), utc(2026, 10, 26, 1, 30, 0)},
		{"berlin every 15 in second pass", "*:0/15", utc(2026, 10, 25, 0, 50, 0).In(berlin), utc(2026, 10, 25, 2, 0, 0)},
		{"berlin from second pass", "*:0/15", utc(2026, 10, 25, 1, 10, 0).In(berlin), utc(2026, 10, 25, 2, 0, 0)},
		{"berlin daily over fall-back", "daily", time.Date(2026, 10, 25, 0, 0, 0, 0, berlin), utc(2026, 10, 25, 23, 0, 0)},
		// New York: 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST.
		{"ny gap skipped that day", "02:30", time.Date(2026, 3, 7, 12, 0, 0, 0, ny), utc(2026, 3, 9, 6, 30, 0)},
		{"ny hourly over gap", "hourly", time.Date(2026, 3, 8, 1, 30, 0, 0, ny), utc(2026, 3, 8, 7, 0, 0)},
		{"ny repeated first pass", "01:30", time.Date(2026, 10, 31, 12, 0, 0, 0, ny), utc(2026, 11, 1, 5, 30, 0)},
		{"ny repeated not twice", "01:30", utc(2026, 11, 1, 5, 30, 0).In(ny), utc(2026, 11, 2, 6, 30, 0)},
	} {
		e, err := Parse(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := e.Next(c.after)
		if !got.Equal(c.want) || got.Location() != c.after.Location() {
			t.Errorf("%s: %q.Next(%s) = %s, want %s in %s", c.name, c.spec, c.after, got, c.want.In(c.after.Location()), c.after.Location())
		}
	}
}

// TestDSTDayCounts: hourly happens 23 times on a spring-forward day and
// 24 times (not 25) on a fall-back day, every-15-minutes 92 and 96.
func TestDSTDayCounts(t *testing.T) {
	berlin := loadLocation(t, "Europe/Berlin")
	ny := loadLocation(t, "America/New_York")
	for _, c := range []struct {
		spec string
		day  time.Time
		want int
	}{
		{"hourly", time.Date(2026, 3, 29, 0, 0, 0, 0, berlin), 23},
		{"hourly", time.Date(2026, 10, 25, 0, 0, 0, 0, berlin), 24},
		{"*:0/15", time.Date(2026, 3, 29, 0, 0, 0, 0, berlin), 92},
		{"*:0/15", time.Date(2026, 10, 25, 0, 0, 0, 0, berlin), 96},
		{"hourly", time.Date(2026, 3, 8, 0, 0, 0, 0, ny), 23},
		{"hourly", time.Date(2026, 11, 1, 0, 0, 0, 0, ny), 24},
	} {
		e, _ := Parse(c.spec)
		end := c.day.AddDate(0, 0, 1)
		n := 0
		seen := map[string]bool{}
		for at := c.day.Add(-time.Second); ; n++ {
			at = e.Next(at)
			if !at.Before(end) {
				break
			}
			wall := at.Format("15:04:05")
			if seen[wall] {
				t.Errorf("%q on %s: %s twice", c.spec, c.day.Format(time.DateOnly), wall)
			}
			seen[wall] = true
		}
		if n != c.want {
			t.Errorf("%q on %s in %s: %d occurrences, want %d", c.spec, c.day.Format(time.DateOnly), c.day.Location(), n, c.want)
		}
	}
}

func TestMissed(t *testing.T) {
	daily, _ := Parse("daily")
	old, _ := Parse("1980-01-01")
	run := utc(2026, 12, 1, 0, 0, 0)
	for _, c := range []struct {
		name      string
		e         *Event
		last, now time.Time
		want      bool
	}{
		{"none yet", daily, run, utc(2026, 12, 1, 23, 59, 59), false},
		{"due now", daily, run, utc(2026, 12, 2, 0, 0, 0), true},
		{"days down", daily, run, utc(2026, 12, 9, 13, 0, 0), true},
		{"never ran", daily, time.Time{}, run, false},
		{"clock went back", daily, run, run.Add(-time.Hour), false},
		{"same instant", daily, run, run, false},
		{"long ago", old, utc(1975, 1, 1, 0, 0, 0), run, true},
		{"past event after it", old, utc(1980, 1, 1, 0, 0, 0), run, false},
		{"centuries", daily, utc(1, 1, 1, 0, 0, 1), run, true},
	} {
		if got := c.e.Missed(c.last, c.now); got != c.want {
			t.Errorf("%s: Missed(%s, %s) = %v, want %v", c.name, c.last, c.now, got, c.want)
		}
	}
}
