package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// The one progress display of every long command of cairn (backup,
// restore, verify, tape, gc, prune, init, sync). It polls a sample function, so
// the workers it watches never wait on it. On a terminal it redraws one
// line: a spinner with bytes and rate while the total is unknown, a bar
// with the ETA once it is known. Elsewhere (a log, a pipe) it prints a
// plain line every plainEvery and one last line when it stops.
//
// No rate and no ETA are shown before rateAfter (or rateBytes bytes):
// the first fraction of a second gives absurd figures.

const (
	plainEvery = 10 * time.Second
	ttyEvery   = 200 * time.Millisecond
	rateAfter  = 2 * time.Second
	rateBytes  = 64 << 20
	rateWindow = 10 * time.Second // the rate is measured over the last rateWindow
	// intervalEnv overrides the interval of both modes: a knob
	// for tests and debugging (a Go duration such as 50ms), not a
	// setting.
	intervalEnv = "CAIRN_PROGRESS_INTERVAL"
)

// Sample is what a display shows at one moment.
type Sample struct {
	Bytes, Total      int64 // Total <= 0: unknown
	Items, ItemsTotal int64 // ItemsTotal <= 0: unknown; shown when ItemsName is set
	ItemsName         string
	Note              string // a phase or other detail, last on the line
	// Archive is the archive at work, shown (quoted) after the label.
	Archive string
	// TotalApprox and ItemsApprox: Total or ItemsTotal is an estimate
	// (a tree backup's reference), shown with "~", as is an ETA from it.
	TotalApprox, ItemsApprox bool
}

// Progress is a display made by New and not yet started, or running.
type Progress struct {
	stop chan struct{}
	done sync.WaitGroup
	// run is the display's loop, started by Start; plain writes a line
	// when w is no terminal (set before Start).
	run   func()
	plain func(s Sample, line string)
}

// SetPlain replaces how a display that is not on a terminal writes a
// line (by default to its writer, one line each): a command logging JSON
// records logs them instead. Call it before Start.
func (p *Progress) SetPlain(f func(s Sample, line string)) { p.plain = f }

// Start runs the display.
func (p *Progress) Start() *Progress {
	p.done.Add(1)
	go p.run()
	return p
}

// Stop ends the display: a terminal's line is cleared, a plain display
// prints its last line.
func (p *Progress) Stop() {
	close(p.stop)
	p.done.Wait()
}

// New makes a display of label on w that polls sample; Start runs it.
func New(w io.Writer, label string, sample func() Sample) *Progress {
	p := &Progress{stop: make(chan struct{})}
	fd, tty := terminalFD(w)
	every := plainEvery
	var tw *termWriter
	if tty {
		every = ttyEvery
		tw = ShareTerminal(w).(*termWriter)
	}
	every = interval(every)
	m := NewMeter(time.Now())
	p.plain = func(_ Sample, line string) { fmt.Fprintln(w, line) }
	p.run = func() {
		defer p.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for frame := 0; ; frame++ {
			select {
			case <-p.stop:
				if tty {
					tw.draw("")
				} else {
					s := sample()
					p.plain(s, m.Line(label, s, time.Now(), -1))
				}
				return
			case <-t.C:
			}
			s := sample()
			if !tty {
				p.plain(s, m.Line(label, s, time.Now(), -1))
				continue
			}
			width := 0
			if cols, _, err := term.GetSize(fd); err == nil {
				width = cols
			}
			tw.draw(m.FitLine(label, s, time.Now(), frame, width))
		}
	}
	return p
}

// termWriter shares a terminal between a progress line and other
// writers (a job's log): a write that is not the display's clears the
// line first, so that it starts on a clean row; the display redraws its
// line on its next tick.
type termWriter struct {
	mu    sync.Mutex
	w     io.Writer
	fd    int
	drawn bool // the progress line is on the screen
}

// terminals holds the one termWriter of each terminal file, so that a
// display and a logger made apart share it.
var terminals struct {
	sync.Mutex
	m map[*os.File]*termWriter
}

// ShareTerminal returns the writer of terminal w shared with progress
// displays, or w itself when w is no terminal.
func ShareTerminal(w io.Writer) io.Writer {
	if _, ok := w.(*termWriter); ok {
		return w
	}
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return w
	}
	terminals.Lock()
	defer terminals.Unlock()
	if terminals.m == nil {
		terminals.m = map[*os.File]*termWriter{}
	}
	if t := terminals.m[f]; t != nil {
		return t
	}
	t := &termWriter{w: f, fd: int(f.Fd())}
	terminals.m[f] = t
	return t
}

func (t *termWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.drawn {
		io.WriteString(t.w, "\r\x1b[K")
		t.drawn = false
	}
	return t.w.Write(b)
}

// draw replaces the progress line by line ("" clears it).
func (t *termWriter) draw(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	io.WriteString(t.w, "\r\x1b[K"+line)
	t.drawn = line != ""
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	_, ok := terminalFD(w)
	return ok
}

// terminalFD reports whether w is a terminal, and its descriptor.
func terminalFD(w io.Writer) (int, bool) {
	if t, ok := w.(*termWriter); ok {
		return t.fd, true
	}
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}

// interval is def, or CAIRN_PROGRESS_INTERVAL when that is a
// positive duration.
func interval(def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(intervalEnv)); err == nil && d > 0 {
		return d
	}
	return def
}
