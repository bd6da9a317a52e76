// Package calendar parses the calendar events of Proxmox Backup Server's
// job schedules (systemd.time(7) "CALENDAR EVENTS") and computes their
// occurrences; cairn serve runs its jobs by them.
//
// The form is
//
//	[WEEKDAYS] [[YEARS-]MONTHS-DAYS] [HOURS:MINUTES[:SECONDS]]
//
// or one of the shortcuts minutely, hourly, daily, weekly, monthly,
// yearly, annually, quarterly, semiannually (semi-annually). Weekdays are
// names (mon or monday, any case) in lists and ranges (mon..fri,sun);
// every other field is * or a list of values (1,15), ranges (1..5),
// repetitions (0/15: 0, 15, 30, 45; */5 from the field's first value)
// and ranges with a repetition (8..18/2). A missing weekday or date
// means every day, a missing time 00:00:00, missing seconds :00.
//
// What the package owns:
//
//   - parse.go: Parse, the bounds (spec length, items a field, values in
//     range, repetitions above 0) and String, the normalized spec;
//   - next.go: Next and Missed, the search for occurrences in a
//     location's wall-clock time;
//   - field.go: a field's set of values and its items.
//
// Occurrences are wall-clock times of the location Next is given (the
// daemon passes local time). Around a change of daylight saving time:
//
//   - a time that does not exist on a spring-forward day (02:30 in
//     Europe/Berlin on the last Sunday of March) is skipped that day, as
//     systemd does (it is not moved to 03:30);
//   - a time that occurs twice on a fall-back day happens once, at its
//     first instant (02:30 summer time, not again an hour later).
//
// Next searches at most SearchYears ahead and returns the zero time when
// nothing occurs in that span (a date in the past, 02-30).
package calendar
