package prune

import (
	"testing"
	"time"
)

// BenchmarkPlan plans a group of 10,000 hourly snapshots (over a year)
// with every rule given, in a zone with DST.
func BenchmarkPlan(b *testing.B) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2023, 1, 1, 0, 30, 0, 0, time.UTC)
	snaps := make([]Snapshot, 10_000)
	for i := range snaps {
		snaps[i] = Snapshot{Time: start.Add(time.Duration(i) * time.Hour), Finished: true, Protected: i%997 == 0}
	}
	o := Options{Last: 24, Hourly: 48, Daily: 30, Weekly: 52, Monthly: 24, Yearly: 10}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Plan(snaps, o, loc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(snaps))*float64(b.N)/b.Elapsed().Seconds(), "snapshots/s")
}
