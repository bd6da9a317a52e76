package prune

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadOptions is wrapped by the errors of Options.Check.
var ErrBadOptions = errors.New("bad prune options")

// MaxKeep bounds every keep count: more periods than any store holds
// snapshots of one group is a mistake in the command, not a policy.
const MaxKeep = 1_000_000

// Options are PBS's keep options. A count of 0 means the rule is not
// given (as PBS, whose callers treat keep-x=0 like an absent keep-x).
type Options struct {
	Last, Hourly, Daily, Weekly, Monthly, Yearly int
}

// rules returns the options' rules in the order they are applied.
func (o Options) rules() []rule {
	return []rule{
		{"keep-last", o.Last, keyLast},
		{"keep-hourly", o.Hourly, keyHourly},
		{"keep-daily", o.Daily, keyDaily},
		{"keep-weekly", o.Weekly, keyWeekly},
		{"keep-monthly", o.Monthly, keyMonthly},
		{"keep-yearly", o.Yearly, keyYearly},
	}
}

// Check rejects negative counts and counts above MaxKeep, naming the
// option and its value.
func (o Options) Check() error {
	for _, r := range o.rules() {
		if r.n < 0 || r.n > MaxKeep {
			return fmt.Errorf("%w: %s=%d: want a count from 0 (not given) to %d", ErrBadOptions, r.name, r.n, MaxKeep)
		}
	}
	return nil
}

// KeepsSomething reports whether any rule is given; without one, a prune
// removes nothing.
func (o Options) KeepsSomething() bool {
	for _, r := range o.rules() {
		if r.n > 0 {
			return true
		}
	}
	return false
}

// String prints the given rules as the command line takes them
// ("--keep-last 3 --keep-daily 7"), or "keep all" when none is given.
func (o Options) String() string {
	var words []string
	for _, r := range o.rules() {
		if r.n > 0 {
			words = append(words, "--"+r.name, strconv.Itoa(r.n))
		}
	}
	if len(words) == 0 {
		return "keep all (no keep option)"
	}
	return strings.Join(words, " ")
}

// Params returns the given rules as key=value parameters of the job
// (keep-last=3 …).
func (o Options) Params(m map[string]string) {
	for _, r := range o.rules() {
		if r.n > 0 {
			m[r.name] = strconv.Itoa(r.n)
		}
	}
}
