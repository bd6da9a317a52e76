package prune

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/cairnfs/cairn/jobs"
)

// FuzzParseJobParams reads hostile control lines: no panic, only
// ErrBadParam (or the parser's ErrBadCommand), and what is accepted
// prints back to parameters that read the same.
func FuzzParseJobParams(f *testing.F) {
	for _, s := range []string{"start group=vm/100 keep-daily=7 dry-run=1", "start all ns=a/b keep-last=3",
		"start group=ns/x/ct/1/latest", "start all group=vm/1", "start group=vm/1 keep-yearly=-0",
		"start group=vm/1 keep-last=+5", "start group=../../vm/1 keep-hourly=0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmd, err := jobs.ParseControl(line)
		if err != nil || cmd.Op != jobs.OpStart {
			return
		}
		o, err := ParseParams(cmd.Params)
		if err != nil {
			if !errors.Is(err, jobs.ErrBadParam) {
				t.Fatalf("%q: %v", line, err)
			}
			return
		}
		if o.Check() != nil || (!o.All && o.Group.Check() != nil) || o.NS.Check() != nil {
			t.Fatalf("%q: accepted %+v", line, o)
		}
		back, err := ParseParams(o.Params())
		if err != nil || back.Options != o.Options || back.All != o.All || back.Group != o.Group || back.DryRun != o.DryRun {
			t.Fatalf("%q: %+v prints as %v, reads back as %+v, %v", line, o, o.Params(), back, err)
		}
	})
}

// FuzzPlan plans groups made from arbitrary bytes (9 bytes a snapshot:
// seconds since 2019 and flags) with arbitrary counts: no panic, every
// snapshot marked once, protected never removed, nothing removed without
// a rule.
func FuzzPlan(f *testing.F) {
	f.Add([]byte("0123456780123456781234567892"), uint8(1), uint8(2), uint8(0), uint8(3))
	f.Fuzz(func(t *testing.T, raw []byte, last, daily, weekly, yearly uint8) {
		base := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
		seen := map[int64]bool{}
		var snaps []Snapshot
		for ; len(raw) >= 9; raw = raw[9:] {
			sec := int64(binary.LittleEndian.Uint64(raw) % (40 * 365 * 24 * 3600))
			if seen[sec] {
				continue
			}
			seen[sec] = true
			snaps = append(snaps, Snapshot{Time: base.Add(time.Duration(sec) * time.Second),
				Finished: raw[8]&1 == 0, Protected: raw[8]&2 != 0})
		}
		o := Options{Last: int(last), Daily: int(daily), Weekly: int(weekly), Yearly: int(yearly)}
		ds, err := Plan(snaps, o, time.Local)
		if err != nil || len(ds) != len(snaps) {
			t.Fatalf("%d snapshots: %d decisions, %v", len(snaps), len(ds), err)
		}
		for _, d := range ds {
			if d.Mark < Keep || d.Mark > Remove || (d.Protected && d.Mark != Protected) ||
				(!o.KeepsSomething() && d.Mark == Remove) {
				t.Fatalf("%s protected=%v finished=%v marked %s with %+v", d.Time, d.Protected, d.Finished, d.Mark, o)
			}
		}
	})
}
