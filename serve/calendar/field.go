package calendar

import (
	"strconv"
	"strings"
)

// bits is a set of small non-negative integers (a field's values less
// its minimum; the widest field, years, has 230).
type bits [4]uint64

func (b *bits) add(v int)      { b[v>>6] |= 1 << (v & 63) }
func (b *bits) has(v int) bool { return v >= 0 && v < 256 && b[v>>6]&(1<<(v&63)) != 0 }
func (b *bits) empty() bool    { return b[0]|b[1]|b[2]|b[3] == 0 }

// Item kinds: how an item was written, so String can write it again.
const (
	itemValue  = iota // N
	itemRange         // N..M
	itemRepeat        // N/R (to the field's end)
	itemStar          // * or */R
)

// item is one comma-separated element of a field.
type item struct {
	kind       int
	start, end int // the values it spans
	rep        int // step; 1 for a value or plain range
}

// field is one of the calendar's fields: its items as written and the
// set of values they select.
type field struct {
	name     string
	min, max int
	width    int // digits String pads a value to
	items    []item
	set      bits
}

// has tells whether v is one of the field's values.
func (f *field) has(v int) bool { return f.set.has(v - f.min) }

// first returns the field's smallest value at or above v, and false
// when there is none.
func (f *field) first(v int) (int, bool) {
	for v = max(v, f.min); v <= f.max; v++ {
		if f.has(v) {
			return v, true
		}
	}
	return 0, false
}

// fillSet computes the set from the items.
func (f *field) fillSet() {
	f.set = bits{}
	for _, it := range f.items {
		for v := it.start; v <= it.end; v += it.rep {
			f.set.add(v - f.min)
		}
	}
}

// star makes the field "*".
func (f *field) star() {
	f.items = []item{{kind: itemStar, start: f.min, end: f.max, rep: 1}}
	f.fillSet()
}

// values makes the field the list of vs.
func (f *field) values(vs ...int) {
	f.items = f.items[:0]
	for _, v := range vs {
		f.items = append(f.items, item{kind: itemValue, start: v, end: v, rep: 1})
	}
	f.fillSet()
}

// String writes the field's items in normalized form.
func (f *field) String() string {
	var b strings.Builder
	for i, it := range f.items {
		if i > 0 {
			b.WriteByte(',')
		}
		switch it.kind {
		case itemStar:
			b.WriteByte('*')
		case itemValue:
			b.WriteString(f.num(it.start))
		default:
			b.WriteString(f.num(it.start))
			if it.kind == itemRange {
				b.WriteString("..")
				b.WriteString(f.num(it.end))
			}
		}
		if it.rep != 1 || it.kind == itemRepeat {
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(it.rep))
		}
	}
	return b.String()
}

func (f *field) num(v int) string {
	s := strconv.Itoa(v)
	for len(s) < f.width {
		s = "0" + s
	}
	return s
}
