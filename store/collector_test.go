package store

import (
	"testing"
	"time"
)

func TestGCCutoff(t *testing.T) {
	fs := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	const day = 24*time.Hour + 5*time.Minute
	for _, tc := range []struct {
		name   string
		atime  time.Duration
		writer time.Time
		want   time.Time
	}{
		{"default, no writer", day, time.Time{}, fs.Add(-day)},
		{"zero, no writer: phase 1's start itself", 0, time.Time{}, fs},
		{"zero, a writer: its start less the margin", 0, fs.Add(-time.Minute), fs.Add(-time.Minute - GCWriterMargin)},
		{"default, an old writer", day, fs.Add(-48 * time.Hour), fs.Add(-48*time.Hour - GCWriterMargin)},
		{"default, a writer just inside: margin still applies", day, fs.Add(-day + time.Minute), fs.Add(-day + time.Minute - GCWriterMargin)},
		{"default, a recent writer", day, fs.Add(-time.Hour), fs.Add(-day)},
	} {
		if got := GCCutoff(fs, tc.atime, tc.writer); !got.Equal(tc.want) {
			t.Errorf("%s: cutoff %v, want %v", tc.name, got, tc.want)
		}
	}
}
