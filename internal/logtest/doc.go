// Package logtest is the log sink tests share: a Buffer that slog
// handlers write to from any goroutine and a test reads while they do,
// and Logger, a text logger at every level into a fresh Buffer.
package logtest
