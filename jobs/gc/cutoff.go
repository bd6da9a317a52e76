package gc

import "time"

// WriterMargin is subtracted from the oldest running writer's start, as
// PBS subtracts 300 s: kernel timestamps are coarse and clocks of
// processes (and of a network file system's server) may differ a little.
const WriterMargin = 5 * time.Minute

// clocks are the moments a GC's cutoff is computed from.
type clocks struct {
	// local is time.Now() just before the atime check's touch; fs is the
	// atime that touch recorded: phase 1's start in the clock of the
	// file system, which every later touch reads no earlier than.
	local, fs time.Time
	// writer is the oldest running writer's start (local clock), when
	// hasWriter.
	writer    time.Time
	hasWriter bool
}

// cutoff is the atime below which an unmarked chunk file is garbage:
// phase 1's start less atimeCutoff, or, when older, the oldest running
// writer's start (moved into the file system's clock) less WriterMargin.
func cutoff(c clocks, atimeCutoff time.Duration) time.Time {
	t := c.fs.Add(-atimeCutoff)
	if c.hasWriter {
		w := c.writer.Add(c.fs.Sub(c.local)).Add(-WriterMargin)
		if w.Before(t) {
			t = w
		}
	}
	return t
}
