// Package progress owns the progress display of cairn's long commands:
// a line redrawn on a terminal (spinner or bar, rate, ETA) or a plain
// line every interval elsewhere (Sample, New, Meter), and the sharing of
// a terminal between that line and other writers (ShareTerminal). It
// polls a sample function and writes only to the writer it is given.
package progress
