package logtest

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// Buffer collects log lines; writes and reads may come from several
// goroutines at once.
type Buffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	waits []waiter
}

// waiter is a Seen call's: its text and the channel to close.
type waiter struct {
	s  string
	ch chan struct{}
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	b.waits = slices.DeleteFunc(b.waits, func(w waiter) bool {
		if strings.Contains(b.buf.String(), w.s) {
			close(w.ch)
			return true
		}
		return false
	})
	return n, err
}

// Seen returns a channel closed once s has been written (at once if it
// has been): a test waits for a log line instead of polling for it.
func (b *Buffer) Seen(s string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(b.buf.String(), s) {
		close(ch)
	} else {
		b.waits = append(b.waits, waiter{s, ch})
	}
	return ch
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Count is how many times s occurs in what was written.
func (b *Buffer) Count(s string) int { return strings.Count(b.String(), s) }

// Logger is a text logger of every level, debug included, writing to a
// new Buffer.
func Logger() (*slog.Logger, *Buffer) {
	b := &Buffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
