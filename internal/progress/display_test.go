package progress

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

func TestProgressLine(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name    string
		s       Sample
		el      time.Duration
		frame   int
		want    string
		without []string
	}{
		{"unknown total, early: spinner, bytes, no rate", Sample{Bytes: 3 * mib}, 500 * time.Millisecond, 1,
			`\ backup: 3.0 MiB`, []string{"MB/s", "ETA", " of "}},
		{"known total, early: bar, no absurd rate or ETA", Sample{Bytes: mib, Total: 4 * mib}, 100 * time.Millisecond, 0,
			"[=====>              ] backup: 1.0 MiB of 4.0 MiB (25.0%)", []string{"MB/s", "ETA"}},
		{"known total, later: rate and ETA", Sample{Bytes: 30 * mib, Total: 100 * mib}, 3 * time.Second, 0,
			"backup: 30 MiB of 100 MiB (30.0%), 10.5 MB/s, ETA 7s", nil},
		{"many bytes early: the rate means something", Sample{Bytes: 100 * mib}, 500 * time.Millisecond, 2,
			"| backup: 100 MiB, 209.7 MB/s", []string{"ETA"}},
		{"plain line: no spinner, elapsed time, note last", Sample{Bytes: 2 * mib, Note: "phase x"}, time.Second, -1,
			"backup: 2.0 MiB, 1s elapsed, phase x", []string{"|", "["}},
		{"items only: no bytes, bar by items", Sample{Items: 16384, ItemsTotal: 65536, ItemsName: "directories"}, time.Second, 0,
			"[=====>              ] backup: 16384 of 65536 directories", []string{" B", "MB/s", "ETA"}},
		{"items only, later: ETA from the items", Sample{Items: 16384, ItemsTotal: 65536, ItemsName: "directories"}, 4 * time.Second, -1,
			"backup: 16384 of 65536 directories, ETA 12s, 4s elapsed", []string{"MB/s"}},
		{"bytes and items of a job", Sample{Bytes: mib, Total: 2 * mib, Items: 3, ItemsTotal: 9, ItemsName: "chunks"}, time.Second, -1,
			"backup: 1.0 MiB of 2.0 MiB (50.0%), 3 of 9 chunks, 1s elapsed", nil},
		{"done past the total: the bar stays full", Sample{Bytes: 5 * mib, Total: 4 * mib}, time.Second, 0,
			"[====================] backup: 5.0 MiB of 4.0 MiB (100.0%)", nil},
	}
	for _, c := range cases {
		checkLine(t, c.name, NewMeter(t0).Line("backup", c.s, at(c.el), c.frame), c.want, false, c.without)
	}
}

// checkLine fails the test when got lacks want (anywhere, or as its
// prefix when prefix) or holds any of without.
func checkLine(t *testing.T, name, got, want string, prefix bool, without []string) {
	t.Helper()
	if prefix && !strings.HasPrefix(got, want) || !prefix && !strings.Contains(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", name, got, want)
	}
	for _, w := range without {
		if strings.Contains(got, w) {
			t.Errorf("%s: %q has %q", name, got, w)
		}
	}
}

// TestProgressRateWindow: the rate follows the recent samples, not the
// average since the start.
func TestProgressRateWindow(t *testing.T) {
	t0 := time.Now()
	m := NewMeter(t0)
	for i := 1; i <= 30; i++ { // 1 MiB/s for 30 s
		m.rate(int64(i)*mib, t0.Add(time.Duration(i)*time.Second))
	}
	r, ok := m.rate(30*mib+50*mib, t0.Add(31*time.Second)) // then 50 MiB in one second
	if !ok || r < 5*mib || r > 10*mib {
		t.Errorf("rate after a burst: %.1f MiB/s (%v), want the last %v's average", r/mib, ok, rateWindow)
	}
}

func TestProgressDisplay(t *testing.T) {
	t.Setenv(intervalEnv, "1h") // no periodic line: only the last one
	var buf bytes.Buffer
	p := New(&buf, "restore x", func() Sample { return Sample{Bytes: 42, Total: 42} }).Start()
	p.Stop()
	if got := buf.String(); !strings.HasPrefix(got, "restore x: 42 B of 42 B (100.0%), 0s elapsed\n") || strings.Count(got, "\n") != 1 {
		t.Errorf("plain display: %q", got)
	}
	for v, want := range map[string]time.Duration{"": plainEvery, "junk": plainEvery, "-1s": plainEvery, "50ms": 50 * time.Millisecond} {
		t.Setenv(intervalEnv, v)
		if got := interval(plainEvery); got != want {
			t.Errorf("%s=%q: %v, want %v", intervalEnv, v, got, want)
		}
	}
	if got := fit("abcdef", 4); got != "abc" {
		t.Errorf("fit: %q", got)
	}
	if got := fit("abc", 0); got != "abc" {
		t.Errorf("fit without a width: %q", got)
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
	if w := ShareTerminal(&buf); w != io.Writer(&buf) {
		t.Errorf("a buffer is no terminal: %T", w)
	}
	if w := ShareTerminal(tw); w != io.Writer(tw) {
		t.Errorf("shared twice: %T", w)
	}
}
