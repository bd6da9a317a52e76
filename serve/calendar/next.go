package calendar

import "time"

// Next returns the first occurrence strictly after after, in
// after.Location(), or the zero time when none falls within SearchYears
// of it. See the package documentation for daylight saving time.
func (e *Event) Next(after time.Time) time.Time {
	loc := after.Location()
	y, m, d := after.Date()
	// Civil dates are walked at noon UTC, where adding days is exact;
	// the day before after's is included, since the wall clock of after
	// may lie in a repeated hour whose first pass belongs to it.
	day := time.Date(y, m, d, 12, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	last := y + SearchYears
	for day.Year() <= last {
		y, m, d := day.Date()
		switch {
		case !e.year.has(y):
			next, ok := e.year.first(y + 1)
			if !ok || next > last {
				return time.Time{}
			}
			day = time.Date(next, 1, 1, 12, 0, 0, 0, time.UTC)
			continue
		case !e.month.has(int(m)):
			day = time.Date(y, m+1, 1, 12, 0, 0, 0, time.UTC)
			continue
		case e.day.has(d) && e.weekday.has(isoWeekday(day.Weekday())):
			if t, ok := e.firstInDay(y, m, d, loc, after); ok {
				return t
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}
}

// isoWeekday numbers the days from Monday (0) to Sunday (6).
func isoWeekday(w time.Weekday) int { return (int(w) + 6) % 7 }

// firstInDay returns the day's first time of the event after after.
// Hours and minutes wholly before after are skipped without looking at
// their seconds.
func (e *Event) firstInDay(y int, m time.Month, d int, loc *time.Location, after time.Time) (time.Time, bool) {
	for h := range 24 {
		if !e.hour.has(h) || !time.Date(y, m, d, h, 59, 59, 0, loc).After(after) {
			continue
		}
		for mi := range 60 {
			if !e.minute.has(mi) || !time.Date(y, m, d, h, mi, 59, 0, loc).After(after) {
				continue
			}
			for s := range 60 {
				if !e.second.has(s) {
					continue
				}
				if t, ok := wallTime(y, m, d, h, mi, s, loc); ok && t.After(after) {
					return t, true
				}
			}
		}
	}
	return time.Time{}, false
}

// wallTime returns the first instant the wall clock of loc shows the
// given time, and false when it never does (a spring-forward gap).
func wallTime(y int, m time.Month, d, h, mi, s int, loc *time.Location) (time.Time, bool) {
	t := time.Date(y, m, d, h, mi, s, 0, loc)
	if !sameWall(t, y, m, d, h, mi, s) {
		return time.Time{}, false // normalized out of a gap: that time does not exist
	}
	// In a repeated hour time.Date may choose either pass: look for the
	// same wall clock in the zone period before t's (with a larger
	// offset, as when summer time ends).
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		return t, true
	}
	_, off := t.Zone()
	_, prevOff := start.Add(-time.Second).Zone()
	if prevOff > off {
		alt := t.Add(-time.Duration(prevOff-off) * time.Second)
		if alt.Before(start) && sameWall(alt, y, m, d, h, mi, s) {
			return alt, true
		}
	}
	return t, true
}

func sameWall(t time.Time, y int, m time.Month, d, h, mi, s int) bool {
	ty, tm, td := t.Date()
	th, tmi, ts := t.Clock()
	return ty == y && tm == m && td == d && th == h && tmi == mi && ts == s
}

// Missed reports whether at least one occurrence fell in (last, now]:
// the daemon then runs the job once ("missed runs caught up once after
// downtime"). A zero last (never run) or a now not after last is not a
// miss; a last more than maxMissedYears before now counts from then.
func (e *Event) Missed(last, now time.Time) bool {
	if last.IsZero() || !now.After(last) {
		return false
	}
	if floor := now.AddDate(-maxMissedYears, 0, 0); last.Before(floor) {
		last = floor
	}
	for from := last; !from.After(now); from = from.AddDate(SearchYears, 0, 0) {
		if t := e.Next(from); !t.IsZero() {
			return !t.After(now)
		}
	}
	return false
}

const maxMissedYears = 100
