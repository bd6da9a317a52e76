package prune

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // pinned zones without the system's tz database
)

// finished returns finished, unprotected snapshots at the given times.
func finished(t *testing.T, times ...string) []Snapshot {
	var out []Snapshot
	for _, s := range times {
		out = append(out, Snapshot{Time: mustTime(t, s), Finished: true})
	}
	return out
}

func berlin(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestPeriodBoundaries checks the periods where calendar, ISO week and
// local time disagree.
func TestPeriodBoundaries(t *testing.T) {
	// 2020 has an ISO week 53: Mon 2020-12-28 .. Sun 2021-01-03.
	// 2018-12-31 (Mon) is in ISO week 1 of 2019.
	w53 := finished(t, "2020-12-31T12:00:00Z", "2021-01-01T12:00:00Z", "2021-01-03T12:00:00Z", "2021-01-04T12:00:00Z")
	w01 := finished(t, "2018-12-30T12:00:00Z", "2018-12-31T12:00:00Z", "2019-01-01T12:00:00Z")
	// Berlin: 2020-12-31T23:30Z is 00:30 on New Year's Day 2021.
	newYear := finished(t, "2020-12-31T22:00:00Z", "2020-12-31T23:30:00Z")
	// Berlin, 2020-10-25: 03:00 CEST falls back to 02:00 CET, so local
	// 02:xx happens twice (00:xxZ and 01:xxZ).
	fallBack := finished(t, "2020-10-25T00:15:00Z", "2020-10-25T01:15:00Z", "2020-10-25T01:45:00Z", "2020-10-25T02:15:00Z")
	// Berlin, 2020-03-29 has 23 hours; these fall on local days
	// 28, 29, 29, 30 (UTC days 28, 28, 29, 29).
	springFwd := finished(t, "2020-03-28T22:30:00Z", "2020-03-28T23:30:00Z", "2020-03-29T21:30:00Z", "2020-03-29T22:30:00Z")
	cases := []struct {
		name string
		list []Snapshot
		opt  Options
		loc  *time.Location
		kept []string
	}{
		{"iso week 53 spans new year", w53, Options{Weekly: 2}, time.UTC,
			[]string{"2021-01-03T12:00:00Z", "2021-01-04T12:00:00Z"}},
		{"iso week 53, calendar years", w53, Options{Yearly: 2}, time.UTC,
			[]string{"2020-12-31T12:00:00Z", "2021-01-04T12:00:00Z"}},
		{"iso week 53, months", w53, Options{Monthly: 5}, time.UTC,
			[]string{"2020-12-31T12:00:00Z", "2021-01-04T12:00:00Z"}},
		{"2018-12-31 is week 1 of 2019", w01, Options{Weekly: 1}, time.UTC,
			[]string{"2019-01-01T12:00:00Z"}},
		{"2018-12-30 is week 52 of 2018", w01, Options{Weekly: 2}, time.UTC,
			[]string{"2018-12-30T12:00:00Z", "2019-01-01T12:00:00Z"}},
		{"new year in UTC", newYear, Options{Yearly: 2}, time.UTC,
			[]string{"2020-12-31T23:30:00Z"}},
		{"new year in Berlin", newYear, Options{Yearly: 2}, berlin(t),
			[]string{"2020-12-31T22:00:00Z", "2020-12-31T23:30:00Z"}},
		{"repeated hour in UTC", fallBack, Options{Hourly: 3}, time.UTC,
			[]string{"2020-10-25T00:15:00Z", "2020-10-25T01:45:00Z", "2020-10-25T02:15:00Z"}},
		{"repeated hour in Berlin is one hour", fallBack, Options{Hourly: 3}, berlin(t),
			[]string{"2020-10-25T01:45:00Z", "2020-10-25T02:15:00Z"}},
		{"23-hour day in UTC", springFwd, Options{Daily: 3}, time.UTC,
			[]string{"2020-03-28T23:30:00Z", "2020-03-29T22:30:00Z"}},
		{"23-hour day in Berlin", springFwd, Options{Daily: 3}, berlin(t),
			[]string{"2020-03-28T22:30:00Z", "2020-03-29T21:30:00Z", "2020-03-29T22:30:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := selectKept(t, c.list, c.opt, c.loc, true)
			if !slices.Equal(got, c.kept) {
				t.Errorf("kept %q, want %q", got, c.kept)
			}
		})
	}
}

// marks plans snaps and returns "TIME mark" lines, newest first.
func marks(t *testing.T, snaps []Snapshot, o Options) []string {
	t.Helper()
	ds, err := Plan(snaps, o, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, d.Time.UTC().Format("01-02T15")+" "+d.Mark.String())
	}
	return out
}

func TestUnfinishedAndProtected(t *testing.T) {
	at := func(s string, fin, prot bool) Snapshot {
		return Snapshot{Time: mustTime(t, "2019-"+s+":00:00Z"), Finished: fin, Protected: prot}
	}
	cases := []struct {
		name string
		list []Snapshot
		opt  Options
		want []string
	}{
		{"newest unfinished is kept partial, older unfinished removed",
			[]Snapshot{at("12-04T13", false, false), at("12-04T12", true, false), at("12-04T11", false, false), at("12-03T12", true, false)},
			Options{Last: 5},
			[]string{"12-04T13 keep-partial", "12-04T12 keep", "12-04T11 remove", "12-03T12 keep"}},
		{"unfinished older than a finished one is removed",
			[]Snapshot{at("12-04T11", false, false), at("12-04T12", true, false)},
			Options{Last: 1}, []string{"12-04T12 keep", "12-04T11 remove"}},
		{"two unfinished on top: only the newest kept",
			[]Snapshot{at("12-04T13", false, false), at("12-04T12", false, false), at("12-04T11", true, false)},
			Options{Last: 1},
			[]string{"12-04T13 keep-partial", "12-04T12 remove", "12-04T11 keep"}},
		{"keep-partial does not cover its day",
			[]Snapshot{at("12-04T13", false, false), at("12-04T12", true, false), at("12-03T12", true, false)},
			Options{Daily: 1},
			[]string{"12-04T13 keep-partial", "12-04T12 keep", "12-03T12 remove"}},
		{"unfinished and protected stays",
			[]Snapshot{at("12-04T13", true, false), at("12-04T12", false, true)},
			Options{Last: 1},
			[]string{"12-04T13 keep", "12-04T12 protected"}},
		{"protected does not count towards keep-last",
			[]Snapshot{at("12-04T13", true, true), at("12-04T12", true, false), at("12-04T11", true, false)},
			Options{Last: 1},
			[]string{"12-04T13 protected", "12-04T12 keep", "12-04T11 remove"}},
		{"protected beyond the rules is still protected",
			[]Snapshot{at("12-04T13", true, false), at("12-04T12", true, false), at("01-01T00", true, true)},
			Options{Last: 1},
			[]string{"12-04T13 keep", "12-04T12 remove", "01-01T00 protected"}},
		{"a later rule sees what an earlier one kept",
			[]Snapshot{at("12-04T13", true, false), at("12-04T12", true, false), at("12-03T12", true, false), at("12-03T11", true, false)},
			Options{Last: 1, Daily: 2},
			[]string{"12-04T13 keep", "12-04T12 remove", "12-03T12 keep", "12-03T11 remove"}},
		{"no keep option keeps everything",
			[]Snapshot{at("12-04T13", false, false), at("12-04T12", true, false), at("12-04T11", false, false), at("12-03T12", true, true)},
			Options{},
			[]string{"12-04T13 keep-partial", "12-04T12 keep", "12-04T11 keep", "12-03T12 protected"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := marks(t, c.list, c.opt); !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestOptionsCheck(t *testing.T) {
	bad := []struct {
		o    Options
		name string
	}{
		{Options{Last: -1}, "keep-last=-1"},
		{Options{Hourly: -5}, "keep-hourly=-5"},
		{Options{Daily: MaxKeep + 1}, "keep-daily=1000001"},
		{Options{Weekly: 1 << 40}, "keep-weekly="},
		{Options{Monthly: -1 << 62}, "keep-monthly="},
		{Options{Last: 3, Yearly: -1}, "keep-yearly=-1"},
	}
	for _, b := range bad {
		_, err := Plan(finished(t, "2020-01-01T00:00:00Z"), b.o, time.UTC)
		if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), b.name) {
			t.Errorf("%+v: got %v, want ErrBadOptions naming %s", b.o, err, b.name)
		}
	}
	if err := (Options{Last: MaxKeep, Yearly: 0}).Check(); err != nil {
		t.Errorf("MaxKeep refused: %v", err)
	}
	if (Options{}).KeepsSomething() || !(Options{Monthly: 1}).KeepsSomething() {
		t.Error("KeepsSomething wrong")
	}
	if got := (Options{Last: 3, Weekly: 2}).String(); got != "--keep-last 3 --keep-weekly 2" {
		t.Errorf("String: %q", got)
	}
}

// randomList returns n snapshots at random times over about two years,
// some unfinished, some protected.
func randomList(r *rand.Rand, n int) []Snapshot {
	base := time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC)
	seen := map[int64]bool{}
	var out []Snapshot
	for len(out) < n {
		t := base.Add(time.Duration(r.Int64N(2*365*24*3600)) * time.Second)
		if seen[t.Unix()] {
			continue
		}
		seen[t.Unix()] = true
		out = append(out, Snapshot{Time: t, Finished: r.IntN(10) > 0, Protected: r.IntN(15) == 0})
	}
	return out
}

// TestPlanProperties checks, over random groups and options, what must
// hold whatever the rules: protected never removed, nothing removed
// without a rule, 0 the same as unset, input untouched and its order
// irrelevant, no more kept by the rules than they ask for.
func TestPlanProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	loc := berlin(t)
	for round := range 500 {
		list := randomList(r, 1+r.IntN(60))
		orig := slices.Clone(list)
		o := Options{Last: r.IntN(4), Hourly: r.IntN(4), Daily: r.IntN(8), Weekly: r.IntN(5), Monthly: r.IntN(13), Yearly: r.IntN(3)}
		ds, err := Plan(list, o, loc)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(list, orig) {
			t.Fatalf("round %d: Plan changed its input", round)
		}
		shuffled := slices.Clone(list)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		ds2, _ := Plan(shuffled, o, loc)
		if !slices.Equal(ds, ds2) {
			t.Fatalf("round %d: result depends on input order", round)
		}
		var c Counts
		for i, d := range ds {
			c.Add(d.Mark)
			if i > 0 && !d.Time.Before(ds[i-1].Time) {
				t.Fatalf("round %d: not newest first at %d", round, i)
			}
			if d.Protected && d.Mark != Protected || !d.Protected && d.Mark == Protected {
				t.Fatalf("round %d: %s protected=%v marked %s", round, d.Time, d.Protected, d.Mark)
			}
			if !o.KeepsSomething() && d.Mark == Remove {
				t.Fatalf("round %d: removed %s without a keep option", round, d.Time)
			}
		}
		if o.KeepsSomething() && c.Keep > o.Last+o.Hourly+o.Daily+o.Weekly+o.Monthly+o.Yearly {
			t.Fatalf("round %d: %+v kept %d", round, o, c.Keep)
		}
		if c.KeepPartial > 1 {
			t.Fatalf("round %d: %d keep-partial", round, c.KeepPartial)
		}
	}
}

// TestKeepZeroIsUnset: a count of 0 plans as the rule not given, and a
// 0 rule at the rule level (PBS's compute_prune_info with Some(0)) keeps
// nothing.
func TestKeepZeroIsUnset(t *testing.T) {
	list := finished(t, "2019-12-02T11:59:15Z", "2019-12-03T11:59:15Z", "2019-12-04T11:59:15Z")
	a, _ := Plan(list, Options{Last: 0, Daily: 2}, time.UTC)
	b, _ := Plan(list, Options{Daily: 2}, time.UTC)
	if !slices.Equal(a, b) {
		t.Errorf("keep-last=0 changed the plan:\n%v\n%v", a, b)
	}
	ds := make([]Decision, len(list))
	for i := range list {
		ds[i].Snapshot = list[len(list)-1-i]
	}
	markSelections(ds, rule{"keep-last", 0, keyLast}, time.UTC)
	for _, d := range ds {
		if d.Mark == Keep {
			t.Errorf("a 0 rule kept %s", d.Time)
		}
	}
}
