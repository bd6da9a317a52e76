package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

const mib = 1 << 20

func TestProgressLine(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name    string
		s       progressSample
		el      time.Duration
		frame   int
		want    string
		without []string
	}{
		{"unknown total, early: spinner, bytes, no rate", progressSample{Bytes: 3 * mib}, 500 * time.Millisecond, 1,
			`\ backup: 3.0 MiB`, []string{"MB/s", "ETA", " of "}},
		{"known total, early: bar, no absurd rate or ETA", progressSample{Bytes: mib, Total: 4 * mib}, 100 * time.Millisecond, 0,
			"[=====>              ] backup: 1.0 MiB of 4.0 MiB (25.0%)", []string{"MB/s", "ETA"}},
		{"known total, later: rate and ETA", progressSample{Bytes: 30 * mib, Total: 100 * mib}, 3 * time.Second, 0,
			"backup: 30 MiB of 100 MiB (30.0%), 10.5 MB/s, ETA 7s", nil},
		{"many bytes early: the rate means something", progressSample{Bytes: 100 * mib}, 500 * time.Millisecond, 2,
			"| backup: 100 MiB, 209.7 MB/s", []string{"ETA"}},
		{"plain line: no spinner, elapsed time, note last", progressSample{Bytes: 2 * mib, Note: "phase x"}, time.Second, -1,
			"backup: 2.0 MiB, 1s elapsed, phase x", []string{"|", "["}},
		{"items only: no bytes, bar by items", progressSample{Items: 16384, ItemsTotal: 65536, ItemsName: "directories"}, time.Second, 0,
			"[=====>              ] backup: 16384 of 65536 directories", []string{" B", "MB/s", "ETA"}},
		{"items only, later: ETA from the items", progressSample{Items: 16384, ItemsTotal: 65536, ItemsName: "directories"}, 4 * time.Second, -1,
			"backup: 16384 of 65536 directories, ETA 12s, 4s elapsed", []string{"MB/s"}},
		{"bytes and items of a job", progressSample{Bytes: mib, Total: 2 * mib, Items: 3, ItemsTotal: 9, ItemsName: "chunks"}, time.Second, -1,
			"backup: 1.0 MiB of 2.0 MiB (50.0%), 3 of 9 chunks, 1s elapsed", nil},
		{"done past the total: the bar stays full", progressSample{Bytes: 5 * mib, Total: 4 * mib}, time.Second, 0,
			"[====================] backup: 5.0 MiB of 4.0 MiB (100.0%)", nil},
	}
	for _, c := range cases {
		m := newMeter(t0)
		got := m.line("backup", c.s, at(c.el), c.frame)
		if !strings.HasPrefix(got, c.want) && !strings.Contains(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		for _, w := range c.without {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q has %q", c.name, got, w)
			}
		}
	}
}

// TestProgressRateWindow: the rate follows the recent samples, not the
// average since the start.
func TestProgressRateWindow(t *testing.T) {
	t0 := time.Now()
	m := newMeter(t0)
	for i := 1; i <= 30; i++ { // 1 MiB/s for 30 s
		m.rate(int64(i)*mib, t0.Add(time.Duration(i)*time.Second))
	}
	r, ok := m.rate(30*mib+50*mib, t0.Add(31*time.Second)) // then 50 MiB in one second
	if !ok || r < 5*mib || r > 10*mib {
		t.Errorf("rate after a burst: %.1f MiB/s (%v), want the last %v's average", r/mib, ok, rateWindow)
	}
}

func TestProgressDisplay(t *testing.T) {
	t.Setenv(progressIntervalEnv, "1h") // no periodic line: only the last one
	var buf bytes.Buffer
	p := runProgress(&buf, "restore x", func() progressSample { return progressSample{Bytes: 42, Total: 42} }).start()
	p.Stop()
	if got := buf.String(); !strings.HasPrefix(got, "restore x: 42 B of 42 B (100.0%), 0s elapsed\n") || strings.Count(got, "\n") != 1 {
		t.Errorf("plain display: %q", got)
	}
	buf.Reset()
	a := &app{stderr: &buf, quiet: true}
	a.startProgress("x", 1, func() (int64, string) { return 1, "" }).Stop()
	if buf.Len() != 0 {
		t.Errorf("-q printed %q", buf.String())
	}
	for v, want := range map[string]time.Duration{"": plainEvery, "junk": plainEvery, "-1s": plainEvery, "50ms": 50 * time.Millisecond} {
		t.Setenv(progressIntervalEnv, v)
		if got := progressInterval(plainEvery); got != want {
			t.Errorf("%s=%q: %v, want %v", progressIntervalEnv, v, got, want)
		}
	}
	if got := fit("abcdef", 4); got != "abc" {
		t.Errorf("fit: %q", got)
	}
	if got := fit("abc", 0); got != "abc" {
		t.Errorf("fit without a width: %q", got)
	}
}

func TestBackupSummaryRatios(t *testing.T) {
	snap := store.Snapshot{Group: store.Group{Type: "vm", ID: "1"}, Time: time.Unix(1e9, 0)}
	img := store.UploadTotals{Bytes: 10 * mib, ZeroBytes: mib, Chunks: 10, NewChunks: 4, NewBytes: 4 * mib, NewStored: 2 * mib}
	px := store.UploadTotals{Bytes: 2 * mib, Chunks: 2, NewChunks: 1, NewBytes: mib, NewStored: mib}
	sum := newBackupSummary(snap, img, px, []pxarSummary{{ReadBytes: 3 * mib, ReusedBytes: 5 * mib, Bytes: 8 * mib}}, time.Second)
	if sum.Bytes != 12*mib || sum.ReadBytes != 13*mib || sum.NewBytes != 5*mib || sum.NewStored != 3*mib ||
		sum.DedupBytes != 7*mib || sum.ReusedBytes != 5*mib || sum.DedupRatio != 12.0/5 || sum.CompressRatio != 5.0/3 {
		t.Errorf("summary %+v", sum)
	}
	none := newBackupSummary(snap, store.UploadTotals{Bytes: mib, Chunks: 1}, store.UploadTotals{}, nil, time.Second)
	if none.DedupRatio != 0 || none.CompressRatio != 0 || ratio(none.DedupRatio) != "- (nothing new)" {
		t.Errorf("nothing new: %+v", none)
	}
	var out bytes.Buffer
	a := &app{stdout: &out, ctx: context.Background()}
	if err := a.printBackupSummary(backupOpts{}, sum); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"read      13 MiB", "reused    5.0 MiB", "12 MiB in 12 chunks: 5.0 MiB new in 5, 7.0 MiB already stored (1.0 MiB zero)",
		"stored    3.0 MiB", "dedup     2.40x", "compress  1.67x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary text lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSnapshotGroups(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	rows := []snapshotRow{
		{Group: "vm/1", Time: "t1", Finished: true, Size: 10, StoredSize: n(4), Verified: "ok"},
		{Group: "vm/1", Time: "t2", Finished: true, Size: 10, StoredSize: n(1), Verified: "failed"},
		{Group: "vm/1", Time: "t3"},
		{Group: "vm/2", Time: "t1", Finished: true, Size: 7, Verified: notVerified},
		{Group: "vm/3", Time: "t1", Finished: true, Size: 7, Verified: notVerified},
		{Group: "vm/3", Time: "t2", Finished: true, Size: 7, StoredSize: n(3), Verified: notVerified},
	}
	g := groupRows(rows)
	if len(g) != 3 || g[0].Snapshots != 3 || g[0].Newest != "t2" || g[0].Size != 20 || g[0].StoredSize != 5 || g[0].StoredUnknown != 0 {
		t.Fatalf("groups %+v", g)
	}
	for i, want := range []string{"vm/1: 3 snapshot(s), newest t2, 20 B logical, 5 B newly stored by its backups",
		"vm/2: 1 snapshot(s), newest t1, 7 B logical, unknown newly stored by its backups",
		"vm/3: 2 snapshot(s), newest t2, 14 B logical, 3 B + unknown (1 snapshot(s) without upload stats) newly stored by its backups"} {
		if got := g[i].String(); got != want {
			t.Errorf("group %d: %q, want %q", i, got, want)
		}
	}
	var out bytes.Buffer
	if err := printSnapshots(&app{stdout: &out}, rows, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"verify ok", "verify failed", "UNFINISHED", "not verified"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("listing lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "verify not verified") {
		t.Errorf("listing says %q:\n%s", "verify not verified", out.String())
	}
	for in, want := range map[string]string{"one": "one", " two\nlines ": "two …", strings.Repeat("x", 70): strings.Repeat("x", 59) + "…"} {
		if got := firstLine(in, 60); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTapeExportGroupArgs(t *testing.T) {
	snaps, groups := splitGroups([]string{"vm/1", "ns/a/vm/2", "vm/3/latest", "vm/4/2024-01-01T00:00:00Z", "bad"})
	if strings.Join(groups, " ") != "vm/1 ns/a/vm/2" || strings.Join(snaps, " ") != "vm/3/latest vm/4/2024-01-01T00:00:00Z bad" {
		t.Errorf("snapshots %v, groups %v", snaps, groups)
	}
}

// TestTermWriter: a log line written while the progress line is shown
// starts on a clean row.
func TestTermWriter(t *testing.T) {
	var buf bytes.Buffer
	tw := &termWriter{w: &buf}
	tw.draw("bar 1")
	tw.Write([]byte("log line\n"))
	tw.Write([]byte("another\n"))
	tw.draw("bar 2")
	tw.draw("")
	want := "\r\x1b[Kbar 1" + "\r\x1b[Klog line\n" + "another\n" + "\r\x1b[Kbar 2" + "\r\x1b[K"
	if buf.String() != want {
		t.Errorf("got  %q\nwant %q", buf.String(), want)
	}
	if w := shareTerminal(&buf); w != io.Writer(&buf) {
		t.Errorf("a buffer is no terminal: %T", w)
	}
	if w := shareTerminal(tw); w != io.Writer(tw) {
		t.Errorf("shared twice: %T", w)
	}
}
