package calendar

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// from is Saturday 2026-12-05 08:17:00 UTC.
var from = time.Date(2026, 12, 5, 8, 17, 0, 0, time.UTC)

func utc(y int, m time.Month, d, h, mi, s int) time.Time {
	return time.Date(y, m, d, h, mi, s, 0, time.UTC)
}

func TestNext(t *testing.T) {
	for _, c := range []struct {
		spec string
		want time.Time // zero: none within SearchYears
	}{
		{"daily", utc(2026, 12, 6, 0, 0, 0)},
		{"hourly", utc(2026, 12, 5, 9, 0, 0)},
		{"minutely", utc(2026, 12, 5, 8, 18, 0)},
		{"weekly", utc(2026, 12, 7, 0, 0, 0)},
		{"monthly", utc(2027, 1, 1, 0, 0, 0)},
		{"yearly", utc(2027, 1, 1, 0, 0, 0)},
		{"annually", utc(2027, 1, 1, 0, 0, 0)},
		{"quarterly", utc(2027, 1, 1, 0, 0, 0)},
		{"semiannually", utc(2027, 1, 1, 0, 0, 0)},
		{"semi-annually", utc(2027, 1, 1, 0, 0, 0)},
		{"mon..fri 02:00", utc(2026, 12, 7, 2, 0, 0)},
		{"sat,sun 10:00", utc(2026, 12, 5, 10, 0, 0)},
		{"sat *-*-1..7 15:00", utc(2026, 12, 5, 15, 0, 0)},
		{"sat *-*-1..7 07:00", utc(2027, 1, 2, 7, 0, 0)},
		{"fri *-*-13", utc(2027, 8, 13, 0, 0, 0)},
		{"Monday 12:00", utc(2026, 12, 7, 12, 0, 0)},
		{"wed..fri,sun 23:59:59", utc(2026, 12, 6, 23, 59, 59)},
		{"*:0/15", utc(2026, 12, 5, 8, 30, 0)},
		{"*:*:0/20", utc(2026, 12, 5, 8, 17, 20)},
		{"*/5:00", utc(2026, 12, 5, 10, 0, 0)},
		{"8..18/2:30", utc(2026, 12, 5, 8, 30, 0)},
		{"9..18/2:30", utc(2026, 12, 5, 9, 30, 0)},
		{"02:00", utc(2026, 12, 6, 2, 0, 0)},
		{"*-*-01", utc(2027, 1, 1, 0, 0, 0)},
		{"*-*-1,15 12:00", utc(2026, 12, 15, 12, 0, 0)},
		{"*-*-31", utc(2026, 12, 31, 0, 0, 0)},
		{"*-1/2-1", utc(2027, 1, 1, 0, 0, 0)},
		{"12-25 18:00", utc(2026, 12, 25, 18, 0, 0)},
		{"*-02-29", utc(2028, 2, 29, 0, 0, 0)},
		{"2030-06-01 12:00", utc(2030, 6, 1, 12, 0, 0)},
		{"2026-12-05 08:17:01", utc(2026, 12, 5, 8, 17, 1)},
		{"*-*-* 08:17:00", utc(2026, 12, 6, 8, 17, 0)}, // strictly after
		{"2026-12-05 08:17", time.Time{}},              // only at from itself
		{"2020-01-01", time.Time{}},                    // past
		{"*-02-30", time.Time{}},                       // never
		{"2040-01-01", time.Time{}},                    // beyond SearchYears
		{"mon *-02-29", time.Time{}},                   // next in 2044
	} {
		e, err := Parse(c.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.spec, err)
			continue
		}
		if got := e.Next(from); !got.Equal(c.want) {
			t.Errorf("%q.Next(%s) = %s, want %s", c.spec, from, got, c.want)
		}
	}
}

func TestNextFractionalAfter(t *testing.T) {
	e, _ := Parse("minutely")
	got := e.Next(from.Add(time.Nanosecond))
	if want := utc(2026, 12, 5, 8, 18, 0); !got.Equal(want) {
		t.Fatalf("got %s, want %s", got, want)
	}
	if got := e.Next(from.Add(-time.Nanosecond)); !got.Equal(from) {
		t.Fatalf("from a nanosecond before: got %s, want %s", got, from)
	}
}

func TestString(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"daily", "*-*-* 00:00:00"},
		{"weekly", "mon *-*-* 00:00:00"},
		{"quarterly", "*-01,04,07,10-01 00:00:00"},
		{"mon..fri 2:0", "mon..fri *-*-* 02:00:00"},
		{"Monday,WED 12:00", "mon,wed *-*-* 12:00:00"},
		{"*:0/15", "*-*-* *:00/15:00"},
		{"*/5:00", "*-*-* */5:00:00"},
		{"1-1", "*-01-01 00:00:00"},
		{"2026-1..3,6-1", "2026-01..03,06-01 00:00:00"},
		{"8..18/2:30:5", "*-*-* 08..18/2:30:05"},
		{"sat  *-*-1..7   15:00", "sat *-*-01..07 15:00:00"},
		{"fri", "fri *-*-* 00:00:00"},
	} {
		e, err := Parse(c.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.spec, err)
			continue
		}
		if got := e.String(); got != c.want {
			t.Errorf("Parse(%q).String() = %q, want %q", c.spec, got, c.want)
		}
		again, err := Parse(e.String())
		if err != nil || again.String() != c.want {
			t.Errorf("Parse(%q) = %v, %v: not the same event", e.String(), again, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		spec, msg string
		col       int
	}{
		{"", "empty", 1},
		{"   ", "empty", 1},
		{"dialy", `unknown word "dialy"`, 1},
		{"mon..fry 02:00", `unknown weekday "fry"`, 6},
		{"fri..mon", "goes backwards", 1},
		{"25:00", "hour 25 out of range 0..23", 1},
		{"12:60", "minute 60 out of range 0..59", 4},
		{"12:00:60", "second 60 out of range", 7},
		{"*:0/0", "step above 0", 5},
		{"*-13-01", "month 13 out of range", 3},
		{"*-*-32", "day 32 out of range", 5},
		{"*-*-0", "day 0 out of range", 5},
		{"1969-01-01", "year 1969 out of range 1970..2199", 1},
		{"12:00 utc", "time zones are not supported", 7},
		{"12:00 12:00", "after the time", 7},
		{"2026-01-01 mon", `unknown word "mon"`, 12},
		{"*-*-1..x", `"x": not a number`, 8},
		{"12345-01-01", "more than 4 digits", 1},
		{"99999999999999999999:00", "more than 4 digits", 1},
		{"1:2:3:4", "want HOURS:MINUTES[:SECONDS]", 1},
		{"1-2-3-4", "want [YEARS-]MONTHS-DAYS", 1},
		{"5..1:00", "hour range \"5..1\" goes backwards", 1},
		{"*:", "empty minute", 3},
		{"1/:00", "hour repetition missing", 3},
		{"*..5:00", `"*": not a number`, 1},
		{"-1:00", "empty month", 1},
		{"\x00", "unknown word", 1},
		{"*:" + strings.Repeat("1,", MaxItems) + "1", "more than 64 items in the minute", 131},
		{strings.Repeat("1,", 200) + "1:00", "longer than 256 bytes", 257},
		{"daily 02:00", `"daily" stands alone`, 1},
		{"mon..fri,dialy", `unknown weekday "dialy"`, 10},
	} {
		_, err := Parse(c.spec)
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError", c.spec, err)
			continue
		}
		if !strings.Contains(se.Msg, c.msg) || se.Column != c.col {
			t.Errorf("Parse(%q): %q at column %d, want %q at column %d", c.spec, se.Msg, se.Column, c.msg, c.col)
		}
	}
}
