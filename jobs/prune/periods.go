package prune

import "time"

// A period key names the period a snapshot falls in for one rule; two
// snapshots with the same key are in the same period. Keys are taken in
// local time (the location Plan is given), as PBS's strftime_local.
type periodKey func(t time.Time, loc *time.Location) int64

// rule is one keep option: its name, its count and its periods.
type rule struct {
	name string
	n    int
	key  periodKey
}

// keyLast: every snapshot is a period of its own (PBS keys keep-last by
// the snapshot's time string).
func keyLast(t time.Time, _ *time.Location) int64 { return t.Unix() }

// dayKey packs a local calendar date into a sortable number.
func dayKey(t time.Time) int64 {
	y, m, d := t.Date()
	return (int64(y)*100+int64(m))*100 + int64(d)
}

// keyHourly: %Y/%m/%d/%H. In the hour a DST change repeats, both
// instances share one key, as they share one strftime string in PBS.
func keyHourly(t time.Time, loc *time.Location) int64 {
	t = t.In(loc)
	return dayKey(t)*100 + int64(t.Hour())
}

// keyDaily: %Y/%m/%d.
func keyDaily(t time.Time, loc *time.Location) int64 { return dayKey(t.In(loc)) }

// keyWeekly: %G/%V, the ISO 8601 week-numbering year and week, which
// may differ from the calendar year around New Year.
func keyWeekly(t time.Time, loc *time.Location) int64 {
	y, w := t.In(loc).ISOWeek()
	return int64(y)*100 + int64(w)
}

// keyMonthly: %Y/%m.
func keyMonthly(t time.Time, loc *time.Location) int64 {
	y, m, _ := t.In(loc).Date()
	return int64(y)*100 + int64(m)
}

// keyYearly: %Y.
func keyYearly(t time.Time, loc *time.Location) int64 { return int64(t.In(loc).Year()) }
