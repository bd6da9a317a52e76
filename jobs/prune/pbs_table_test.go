package prune

import (
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

// The lists and expectations of PBS's own prune tests (tests/prune.rs in
// proxmox-backup), ported: each case names a list of snapshots (times
// in UTC, the zone PBS's test runs in), the keep options, whether the
// expectation lists the kept or the removed snapshots, and that list,
// oldest first as PBS's get_prune_list returns it.

// pbsSnap is one entry of a PBS test list: "+" marks a protected one.
type pbsSnap struct {
	time      string
	protected bool
}

var (
	pbsProtected = []pbsSnap{
		{"2019-11-15T09:39:15Z", true},
		{"2019-11-15T10:39:15Z", false},
		{"2019-11-15T10:49:15Z", false},
		{"2019-11-15T10:59:15Z", true},
	}
	pbsHourly = []pbsSnap{
		{"2019-11-15T09:39:15Z", false},
		{"2019-11-15T10:49:15Z", false},
		{"2019-11-15T10:59:15Z", false},
		{"2019-11-15T11:39:15Z", false},
		{"2019-11-15T11:49:15Z", false},
		{"2019-11-15T11:59:15Z", false},
	}
	pbsSimple2 = []pbsSnap{
		{"2018-11-15T11:59:15Z", false},
		{"2019-11-15T11:59:15Z", false},
		{"2019-11-21T11:59:15Z", false},
		{"2019-11-22T11:59:15Z", false},
		{"2019-11-29T11:59:15Z", false},
		{"2019-12-01T11:59:15Z", false},
		{"2019-12-02T11:59:15Z", false},
		{"2019-12-03T11:59:15Z", false},
		{"2019-12-04T11:59:15Z", false},
	}
	pbsSimple = []pbsSnap{
		{"2019-12-02T11:59:15Z", false},
		{"2019-12-03T11:59:15Z", false},
		{"2019-12-04T11:59:15Z", false},
		{"2019-12-04T12:59:15Z", false},
	}
)

func TestPBSPruneTable(t *testing.T) {
	cases := []struct {
		name string
		list []pbsSnap
		opt  Options
		kept bool // want lists the kept snapshots (else the removed ones)
		want []string
	}{
		// test_prune_protected
		{"protected last1", pbsProtected, Options{Last: 1}, false, []string{"2019-11-15T10:39:15Z"}},
		{"protected hourly1", pbsProtected, Options{Hourly: 1}, false, []string{"2019-11-15T10:39:15Z"}},
		// test_prune_hourly
		{"hourly3", pbsHourly, Options{Hourly: 3}, false,
			[]string{"2019-11-15T10:49:15Z", "2019-11-15T11:39:15Z", "2019-11-15T11:49:15Z"}},
		{"hourly2 kept", pbsHourly, Options{Hourly: 2}, true, []string{"2019-11-15T10:59:15Z", "2019-11-15T11:59:15Z"}},
		// test_prune_simple2
		{"simple2 daily1", pbsSimple2, Options{Daily: 1}, true, []string{"2019-12-04T11:59:15Z"}},
		{"simple2 last1 daily1", pbsSimple2, Options{Last: 1, Daily: 1}, true,
			[]string{"2019-12-03T11:59:15Z", "2019-12-04T11:59:15Z"}},
		{"simple2 daily1 weekly1", pbsSimple2, Options{Daily: 1, Weekly: 1}, true,
			[]string{"2019-12-01T11:59:15Z", "2019-12-04T11:59:15Z"}},
		{"simple2 daily1 weekly1 monthly1", pbsSimple2, Options{Daily: 1, Weekly: 1, Monthly: 1}, true,
			[]string{"2019-11-22T11:59:15Z", "2019-12-01T11:59:15Z", "2019-12-04T11:59:15Z"}},
		{"simple2 monthly1 yearly1", pbsSimple2, Options{Monthly: 1, Yearly: 1}, true,
			[]string{"2018-11-15T11:59:15Z", "2019-12-04T11:59:15Z"}},
		// test_prune_simple
		{"simple last4", pbsSimple, Options{Last: 4}, false, nil},
		{"simple last3", pbsSimple, Options{Last: 3}, false, []string{"2019-12-02T11:59:15Z"}},
		{"simple last2", pbsSimple, Options{Last: 2}, false, []string{"2019-12-02T11:59:15Z", "2019-12-03T11:59:15Z"}},
		{"simple last1", pbsSimple, Options{Last: 1}, false,
			[]string{"2019-12-02T11:59:15Z", "2019-12-03T11:59:15Z", "2019-12-04T11:59:15Z"}},
		// PBS's table has keep-last=0 remove all four: that is
		// compute_prune_info alone. Every PBS caller then sees
		// keeps_something() false and keeps all, which is what a prune
		// with keep-last=0 does; TestKeepZeroIsUnset checks the rule
		// level (nothing kept by a 0 rule).
		{"simple last0 (PBS callers: keep all)", pbsSimple, Options{Last: 0}, false, nil},
		{"simple last2 daily2", pbsSimple, Options{Last: 2, Daily: 2}, false, nil},
		{"simple daily3", pbsSimple, Options{Daily: 3}, false, []string{"2019-12-04T11:59:15Z"}},
		{"simple daily2", pbsSimple, Options{Daily: 2}, false, []string{"2019-12-02T11:59:15Z", "2019-12-04T11:59:15Z"}},
		{"simple weekly5", pbsSimple, Options{Weekly: 5}, false,
			[]string{"2019-12-02T11:59:15Z", "2019-12-03T11:59:15Z", "2019-12-04T11:59:15Z"}},
		{"simple daily1 weekly5", pbsSimple, Options{Daily: 1, Weekly: 5}, false,
			[]string{"2019-12-02T11:59:15Z", "2019-12-03T11:59:15Z", "2019-12-04T11:59:15Z"}},
		{"simple monthly6", pbsSimple, Options{Monthly: 6}, false,
			[]string{"2019-12-02T11:59:15Z", "2019-12-03T11:59:15Z", "2019-12-04T11:59:15Z"}},
		{"simple yearly7", pbsSimple, Options{Yearly: 7}, false,
			[]string{"2019-12-02T11:59:15Z", "2019-12-03T11:59:15Z", "2019-12-04T11:59:15Z"}},
		{"simple weekly5 monthly6 yearly7", pbsSimple, Options{Weekly: 5, Monthly: 6, Yearly: 7}, false,
			[]string{"2019-12-02T11:59:15Z", "2019-12-03T11:59:15Z", "2019-12-04T11:59:15Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var snaps []Snapshot
			for _, s := range c.list {
				snaps = append(snaps, Snapshot{Time: mustTime(t, s.time), Finished: true, Protected: s.protected})
			}
			got := selectKept(t, snaps, c.opt, time.UTC, c.kept)
			if !slices.Equal(got, c.want) {
				t.Errorf("%v kept=%v: got %q, want %q", c.opt, c.kept, got, c.want)
			}
		})
	}
}

// selectKept plans snaps and returns the times of the kept (or removed)
// snapshots, oldest first, as PBS's get_prune_list does.
func selectKept(t *testing.T, snaps []Snapshot, o Options, loc *time.Location, kept bool) []string {
	t.Helper()
	ds, err := Plan(snaps, o, loc)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != len(snaps) {
		t.Fatalf("Plan returned %d decisions for %d snapshots", len(ds), len(snaps))
	}
	var out []string
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].Mark == 0 {
			t.Fatalf("%s left without a mark", ds[i].Time)
		}
		if ds[i].Mark.Kept() == kept {
			out = append(out, ds[i].Time.UTC().Format(store.TimeFormat))
		}
	}
	return out
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}
