package logtest

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// Buffer collects log lines; writes and reads may come from several
// goroutines at once.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
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
