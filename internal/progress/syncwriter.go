package progress

import (
	"io"
	"os"
	"sync"
)

// SyncWriter serializes the writes to w of a command's goroutines (a
// job's log and the progress display both write stderr) where w is no
// file, such as a test's buffer; an *os.File is safe as it is and stays
// one, for the terminal checks (ShareTerminal).
func SyncWriter(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok || w == nil {
		return w
	}
	return &lockedWriter{w: w}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
