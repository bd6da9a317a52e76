package progress

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestProgressLineTrees: the archive at work, file counts, estimated
// totals and ETA marked "~", no ETA past an estimate, an ETA from the
// files when only their total is known, hostile names quoted.
func TestProgressLineTrees(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tree := Sample{Archive: "root.pxar", ItemsName: "files", TotalApprox: true, ItemsApprox: true}
	withFigures := func(s Sample, bytes, total, items, itemsTotal int64) Sample {
		s.Bytes, s.Total, s.Items, s.ItemsTotal = bytes, total, items, itemsTotal
		return s
	}
	cases := []struct {
		name    string
		s       Sample
		frame   int
		want    string
		without []string
	}{
		{"a reference's estimate", withFigures(tree, 30*mib, 100*mib, 10, 40), -1,
			"backup root.pxar: 30 MiB of ~100 MiB (30.0%), 10 of ~40 files, 10.5 MB/s, ETA ~7s, 3s elapsed", nil},
		{"past the estimate: no ETA", withFigures(tree, 120*mib, 100*mib, 50, 40), -1,
			"backup root.pxar: 120 MiB of ~100 MiB (100.0%), 50 of ~40 files, 41.9 MB/s, 3s elapsed", []string{"ETA"}},
		{"a first backup: no totals, no ETA", withFigures(tree, 30*mib, 0, 10, 0), 1,
			`\ backup root.pxar: 30 MiB, 10 files, 10.5 MB/s`, []string{"ETA", " of ", "~"}},
		{"a restore: files known exactly, the bar and ETA by files",
			Sample{Archive: "root.pxar", Bytes: 30 * mib, Items: 10, ItemsTotal: 40, ItemsName: "files"}, 0,
			"[=====>              ] backup root.pxar: 30 MiB, 10 of 40 files, 10.5 MB/s, ETA 9s", []string{"~", "zeroes"}},
		{"a hostile name is quoted", Sample{Archive: "e\x1b[31m\n.pxar", Bytes: mib}, -1,
			`backup "e\x1b[31m\n.pxar": 1.0 MiB`, []string{"\x1b", "\n"}},
	}
	for _, c := range cases {
		checkLine(t, c.name, NewMeter(t0).Line("backup", c.s, t0.Add(3*time.Second), c.frame), c.want, true, c.without)
	}
}

// TestProgressLineWidth: a line longer than the terminal gives way in
// the label and archive name, keeping the figures; it never reaches the
// last column.
func TestProgressLineWidth(t *testing.T) {
	t0 := time.Now()
	s := Sample{Archive: strings.Repeat("long-name-", 10) + ".pxar", Bytes: 30 * mib, Total: 100 * mib,
		TotalApprox: true, Items: 10, ItemsTotal: 40, ItemsName: "files"}
	for _, width := range []int{120, 100, 30} {
		got := NewMeter(t0).FitLine("backup host/h/2026-01-01T00:00:00Z", s, t0.Add(3*time.Second), 0, width)
		if n := utf8.RuneCountInString(got); n >= width {
			t.Errorf("width %d: %d runes: %q", width, n, got)
		}
		if width >= 100 && (!strings.Contains(got, "…") || !strings.Contains(got, "ETA ~7s")) {
			t.Errorf("width %d: label not shortened or figures lost: %q", width, got)
		}
	}
	s.Archive = "root.pxar" // the label gives way before the archive's name
	if got := NewMeter(t0).FitLine("backup host/h/2026-01-01T00:00:00Z", s, t0.Add(3*time.Second), 0, 110); !strings.Contains(got, "…") || !strings.Contains(got, "Z root.pxar: 30 MiB") {
		t.Errorf("width 110: %q", got)
	}
	if got := NewMeter(t0).FitLine("backup", s, t0, 0, 300); strings.Contains(got, "…") {
		t.Errorf("shortened without need: %q", got)
	}
}
