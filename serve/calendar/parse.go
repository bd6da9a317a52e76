package calendar

import (
	"errors"
	"fmt"
	"strings"
)

// Bounds of what Parse accepts: a longer spec or a field with more items
// is refused, not evaluated.
const (
	MaxSpecLen  = 256 // bytes
	MaxItems    = 64  // comma-separated items in one field
	maxDigits   = 4   // digits in one number
	firstYear   = 1970
	lastYear    = 2199
	SearchYears = 10 // how far ahead Next looks
)

// ErrSyntax is what every error of Parse wraps.
var ErrSyntax = errors.New("bad calendar event")

// SyntaxError says what is wrong with a spec and where (Column counts
// bytes from 1).
type SyntaxError struct {
	Spec   string
	Column int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("calendar event %q: %s (column %d)", e.Spec, e.Msg, e.Column)
}

// Unwrap makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Event is a parsed calendar event; it is never changed after Parse.
type Event struct {
	weekday, year, month, day, hour, minute, second field
	weekdayGiven                                    bool
}

var weekdayNames = [7]string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

var longWeekdays = [7]string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// shortcuts are the named events and what they stand for.
var shortcuts = map[string]string{
	"minutely":      "*-*-* *:*:00",
	"hourly":        "*-*-* *:00:00",
	"daily":         "*-*-* 00:00:00",
	"weekly":        "mon *-*-* 00:00:00",
	"monthly":       "*-*-01 00:00:00",
	"yearly":        "*-01-01 00:00:00",
	"annually":      "*-01-01 00:00:00",
	"quarterly":     "*-01,04,07,10-01 00:00:00",
	"semiannually":  "*-01,07-01 00:00:00",
	"semi-annually": "*-01,07-01 00:00:00",
}

func newEvent() *Event {
	e := &Event{
		weekday: field{name: "weekday", min: 0, max: 6},
		year:    field{name: "year", min: firstYear, max: lastYear, width: 4},
		month:   field{name: "month", min: 1, max: 12, width: 2},
		day:     field{name: "day", min: 1, max: 31, width: 2},
		hour:    field{name: "hour", min: 0, max: 23, width: 2},
		minute:  field{name: "minute", min: 0, max: 59, width: 2},
		second:  field{name: "second", min: 0, max: 59, width: 2},
	}
	for _, f := range []*field{&e.weekday, &e.year, &e.month, &e.day} {
		f.star()
	}
	for _, f := range []*field{&e.hour, &e.minute, &e.second} {
		f.values(0)
	}
	return e
}

// parser holds the spec being parsed, for errors that point into it.
type parser struct{ spec string }

func (p *parser) errorf(col int, format string, args ...any) error {
	spec := p.spec
	if len(spec) > 80 {
		spec = spec[:80] + "…"
	}
	return &SyntaxError{Spec: spec, Column: col + 1, Msg: fmt.Sprintf(format, args...)}
}

// token is a word of the spec and its byte offset.
type token struct {
	s   string
	off int
}

func tokens(spec string) []token {
	var out []token
	start := -1
	for i := 0; i <= len(spec); i++ {
		if i == len(spec) || spec[i] == ' ' || spec[i] == '\t' {
			if start >= 0 {
				out = append(out, token{spec[start:i], start})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

// Parse parses a calendar event. Errors wrap ErrSyntax and are a
// *SyntaxError saying what is wrong and at which column.
func Parse(spec string) (*Event, error) {
	p := &parser{spec: spec}
	if len(spec) > MaxSpecLen {
		return nil, p.errorf(MaxSpecLen, "longer than %d bytes", MaxSpecLen)
	}
	lower := strings.ToLower(spec)
	toks := tokens(lower)
	if len(toks) == 0 {
		return nil, p.errorf(0, "empty: want [WEEKDAYS] [[YEARS-]MONTHS-DAYS] [HOURS:MINUTES[:SECONDS]] or daily, weekly, …")
	}
	if len(toks) == 1 {
		if exp, ok := shortcuts[toks[0].s]; ok {
			return Parse(exp)
		}
	}
	e := newEvent()
	if err := p.parseTokens(e, toks); err != nil {
		return nil, err
	}
	return e, nil
}

// parseTokens fills e from the words of the spec: weekdays, date and
// time, each at most once and in that order.
func (p *parser) parseTokens(e *Event, toks []token) error {
	const wantWeekday, wantDate, wantTime, done = 0, 1, 2, 3
	state := wantWeekday
	for _, t := range toks {
		c := t.s[0]
		switch {
		case len(toks) > 1 && shortcuts[t.s] != "":
			return p.errorf(t.off, "%q stands alone: it is the whole event", t.s)
		case state == wantWeekday && c >= 'a' && c <= 'z' && (isWeekday(t.s) || strings.ContainsAny(t.s, ",.")):
			if err := p.parseWeekdays(e, t); err != nil {
				return err
			}
			e.weekdayGiven = true
			state = wantDate
		case state <= wantDate && strings.Contains(t.s, "-"):
			if err := p.parseDate(e, t); err != nil {
				return err
			}
			state = wantTime
		case state <= wantTime && strings.Contains(t.s, ":"):
			if err := p.parseTime(e, t); err != nil {
				return err
			}
			state = done
		case state == done:
			return p.errorf(t.off, "%q after the time: time zones are not supported, the event is in local time", t.s)
		default:
			return p.errorf(t.off, "unknown word %q: want [WEEKDAYS] [[YEARS-]MONTHS-DAYS] [HOURS:MINUTES[:SECONDS]] or daily, weekly, …", t.s)
		}
	}
	return nil
}

// parseWeekdays parses "mon..fri,sun".
func (p *parser) parseWeekdays(e *Event, t token) error {
	f := &e.weekday
	f.items = f.items[:0]
	off := t.off
	for part := range strings.SplitSeq(t.s, ",") {
		if len(f.items) == MaxItems {
			return p.errorf(off, "more than %d weekdays", MaxItems)
		}
		lo, hi, isRange := strings.Cut(part, "..")
		a, err := p.weekday(lo, off)
		if err != nil {
			return err
		}
		it := item{kind: itemValue, start: a, end: a, rep: 1}
		if isRange {
			b, err := p.weekday(hi, off+len(lo)+2)
			if err != nil {
				return err
			}
			if b < a {
				return p.errorf(off, "weekday range %q goes backwards: want mon..sun order", part)
			}
			it = item{kind: itemRange, start: a, end: b, rep: 1}
		}
		f.items = append(f.items, it)
		off += len(part) + 1
	}
	f.fillSet()
	return nil
}

// isWeekday tells a weekday's name.
func isWeekday(s string) bool {
	for i := range weekdayNames {
		if s == weekdayNames[i] || s == longWeekdays[i] {
			return true
		}
	}
	return false
}

func (p *parser) weekday(s string, off int) (int, error) {
	for i := range weekdayNames {
		if s == weekdayNames[i] || s == longWeekdays[i] {
			return i, nil
		}
	}
	return 0, p.errorf(off, "unknown weekday %q: want mon, tue, wed, thu, fri, sat or sun", s)
}

// parseDate parses "[YEARS-]MONTHS-DAYS".
func (p *parser) parseDate(e *Event, t token) error {
	parts := strings.Split(t.s, "-")
	fields := []*field{&e.month, &e.day}
	switch len(parts) {
	case 2:
	case 3:
		fields = []*field{&e.year, &e.month, &e.day}
	default:
		return p.errorf(t.off, "date %q: want [YEARS-]MONTHS-DAYS", t.s)
	}
	return p.parseFields(fields, parts, t.off)
}

// parseTime parses "HOURS:MINUTES[:SECONDS]".
func (p *parser) parseTime(e *Event, t token) error {
	parts := strings.Split(t.s, ":")
	fields := []*field{&e.hour, &e.minute, &e.second}
	if len(parts) < 2 || len(parts) > 3 {
		return p.errorf(t.off, "time %q: want HOURS:MINUTES[:SECONDS]", t.s)
	}
	return p.parseFields(fields[:len(parts)], parts, t.off)
}

func (p *parser) parseFields(fields []*field, parts []string, off int) error {
	for i, f := range fields {
		if err := p.parseField(f, parts[i], off); err != nil {
			return err
		}
		off += len(parts[i]) + 1
	}
	return nil
}

// parseField parses one field: "*" or a comma-separated list of N,
// N..M, N/R, N..M/R and */R.
func (p *parser) parseField(f *field, s string, off int) error {
	if s == "" {
		return p.errorf(off, "empty %s", f.name)
	}
	f.items = f.items[:0]
	for part := range strings.SplitSeq(s, ",") {
		if len(f.items) == MaxItems {
			return p.errorf(off, "more than %d items in the %s", MaxItems, f.name)
		}
		it, err := p.parseItem(f, part, off)
		if err != nil {
			return err
		}
		f.items = append(f.items, it)
		off += len(part) + 1
	}
	f.fillSet()
	if f.set.empty() {
		return p.errorf(off, "no %s matches %q", f.name, s)
	}
	return nil
}

func (p *parser) parseItem(f *field, s string, off int) (item, error) {
	span, repText, hasRep := strings.Cut(s, "/")
	it := item{rep: 1}
	if hasRep {
		rep, err := p.number(f, repText, off+len(span)+1, "repetition")
		if err != nil {
			return it, err
		}
		if rep == 0 {
			return it, p.errorf(off+len(span)+1, "%s repetition %q: want a step above 0", f.name, s)
		}
		it.rep = rep
	}
	lo, hi, isRange := strings.Cut(span, "..")
	switch {
	case span == "*":
		it.kind, it.start, it.end = itemStar, f.min, f.max
		return it, nil
	case isRange:
		it.kind = itemRange
	case hasRep:
		it.kind = itemRepeat
	default:
		it.kind = itemValue
	}
	a, err := p.value(f, lo, off)
	if err != nil {
		return it, err
	}
	it.start, it.end = a, a
	switch it.kind {
	case itemRepeat:
		it.end = f.max
	case itemRange:
		b, err := p.value(f, hi, off+len(lo)+2)
		if err != nil {
			return it, err
		}
		if b < a {
			return it, p.errorf(off, "%s range %q goes backwards", f.name, span)
		}
		it.end = b
	}
	return it, nil
}

// value parses a number in the field's range.
func (p *parser) value(f *field, s string, off int) (int, error) {
	v, err := p.number(f, s, off, "value")
	if err != nil {
		return 0, err
	}
	if v < f.min || v > f.max {
		return 0, p.errorf(off, "%s %d out of range %d..%d", f.name, v, f.min, f.max)
	}
	return v, nil
}

// number parses up to maxDigits decimal digits.
func (p *parser) number(f *field, s string, off int, what string) (int, error) {
	if s == "" {
		return 0, p.errorf(off, "%s %s missing", f.name, what)
	}
	if len(s) > maxDigits {
		return 0, p.errorf(off, "%s %s %q: more than %d digits", f.name, what, s, maxDigits)
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, p.errorf(off+i, "%s %s %q: not a number", f.name, what, s)
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, nil
}

// String returns the normalized spec: "[WEEKDAYS ]YEARS-MONTHS-DAYS
// HOURS:MINUTES:SECONDS", a shortcut written out ("daily" is
// "*-*-* 00:00:00"). Parse of it gives the same event.
func (e *Event) String() string {
	var b strings.Builder
	if e.weekdayGiven {
		for i, it := range e.weekday.items {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(weekdayNames[it.start])
			if it.kind == itemRange {
				b.WriteString("..")
				b.WriteString(weekdayNames[it.end])
			}
		}
		b.WriteByte(' ')
	}
	fmt.Fprintf(&b, "%s-%s-%s %s:%s:%s", e.year.String(), e.month.String(), e.day.String(),
		e.hour.String(), e.minute.String(), e.second.String())
	return b.String()
}
