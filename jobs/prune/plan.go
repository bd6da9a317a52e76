package prune

import (
	"fmt"
	"slices"
	"time"
)

// Mark is what a prune does with a snapshot, named as PBS names it.
type Mark uint8

// Marks. The zero Mark is "not decided yet" and never leaves Plan.
const (
	Keep        Mark = iota + 1 // kept by a rule (or by no rule given)
	KeepPartial                 // the newest unfinished snapshot, no finished one newer
	Protected                   // protected: never removed
	Remove                      // to be removed
)

// String returns PBS's name of the mark.
func (m Mark) String() string {
	switch m {
	case Keep:
		return "keep"
	case KeepPartial:
		return "keep-partial"
	case Protected:
		return "protected"
	case Remove:
		return "remove"
	}
	return fmt.Sprintf("mark(%d)", uint8(m))
}

// MarshalText prints the mark's name (JSON: "keep", "remove", …).
func (m Mark) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// Kept reports whether a snapshot with this mark stays.
func (m Mark) Kept() bool { return m != Remove }

// Snapshot is what Plan needs to know of one snapshot of a group.
type Snapshot struct {
	Time      time.Time
	Finished  bool // has a manifest
	Protected bool
}

// Decision is a snapshot with its mark.
type Decision struct {
	Snapshot
	Mark Mark
	// Rule is the keep option that kept it (keep-daily, …; "" when no
	// rule did: kept because none was given, or another mark).
	Rule string
}

// Plan marks the snapshots of one group by PBS's rules (see the package
// documentation), periods taken in loc (nil: time.Local). It returns the
// decisions newest first; snaps is not modified. Times are expected to
// be distinct, as a group's snapshot directories are.
func Plan(snaps []Snapshot, o Options, loc *time.Location) ([]Decision, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if loc == nil {
		loc = time.Local
	}
	list := make([]Decision, len(snaps))
	for i, s := range snaps {
		list[i].Snapshot = s
	}
	slices.SortStableFunc(list, func(a, b Decision) int { return b.Time.Compare(a.Time) })
	markUnfinished(list)
	for _, r := range o.rules() {
		if r.n > 0 {
			markSelections(list, r, loc)
		}
	}
	keepAll := !o.KeepsSomething()
	for i := range list {
		d := &list[i]
		switch {
		case d.Protected:
			d.Mark = Protected
		case keepAll && d.Mark != KeepPartial:
			d.Mark = Keep
		case d.Mark == 0:
			d.Mark = Remove
		}
	}
	return list, nil
}

// markUnfinished marks the unfinished snapshots of list (newest first):
// the first one keep-partial when no finished snapshot is newer, every
// other one remove.
func markUnfinished(list []Decision) {
	keepPartial := true
	for i := range list {
		d := &list[i]
		if d.Finished {
			keepPartial = false
			continue
		}
		d.Mark = Remove
		if keepPartial {
			d.Mark = KeepPartial
		}
		keepPartial = false
	}
}

// markSelections applies one rule to the snapshots of list no earlier
// rule marked: the newest snapshot of each period not covered by a
// snapshot already kept is kept, until r.n periods are; later snapshots
// of a period this rule kept are removed; protected snapshots are marked
// so and do not count. The walk stops at the first new period beyond n.
func markSelections(list []Decision, r rule, loc *time.Location) {
	covered := map[int64]bool{}
	for _, d := range list {
		if d.Mark == Keep {
			covered[r.key(d.Time, loc)] = true
		}
	}
	kept := map[int64]bool{}
	for i := range list {
		d := &list[i]
		if d.Mark != 0 {
			continue
		}
		if d.Protected {
			d.Mark = Protected
			continue
		}
		k := r.key(d.Time, loc)
		switch {
		case covered[k]:
		case kept[k]:
			d.Mark = Remove
		case len(kept) >= r.n:
			return
		default:
			kept[k] = true
			d.Mark, d.Rule = Keep, r.name
		}
	}
}

// Counts tallies decisions by mark.
type Counts struct {
	Keep        int `json:"keep"`
	KeepPartial int `json:"keep_partial"`
	Protected   int `json:"protected"`
	Remove      int `json:"remove"`
}

// Add counts one mark.
func (c *Counts) Add(m Mark) {
	switch m {
	case Keep:
		c.Keep++
	case KeepPartial:
		c.KeepPartial++
	case Protected:
		c.Protected++
	case Remove:
		c.Remove++
	}
}
