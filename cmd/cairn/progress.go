package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// The one progress display of every long command (backup, restore,
// verify, tape, gc, prune, init, sync). It polls a sample function, so
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
	// progressIntervalEnv overrides the interval of both modes: a knob
	// for tests and debugging (a Go duration such as 50ms), not a
	// setting.
	progressIntervalEnv = "CAIRN_PROGRESS_INTERVAL"
)

// progressSample is what a display shows at one moment.
type progressSample struct {
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

// display is a progress display; Stop ends it.
type display interface{ Stop() }

type noProgress struct{}

func (noProgress) Stop() {}

// startProgress is how every command shows progress on stderr: label,
// bytes done of total (<= 0: unknown), and a note from get. -q shows
// nothing. Stop it before printing a summary.
func (a *app) startProgress(label string, total int64, get func() (int64, string)) display {
	return a.showProgress(label, func() progressSample {
		n, note := get()
		return progressSample{Bytes: n, Total: total, Note: note}
	})
}

// showProgress is startProgress for displays that count items too or
// whose total changes (the jobs'). -q shows nothing.
func (a *app) showProgress(label string, sample func() progressSample) display {
	if a.quiet {
		return noProgress{}
	}
	p := runProgress(a.stderr, label, sample)
	if a.logFormat == "json" { // plain lines would break a stream of JSON records
		p.plain = func(s progressSample, line string) {
			a.logger.Info("progress", "what", label, "bytes", s.Bytes, "total", s.Total,
				"items", s.Items, "items_total", s.ItemsTotal, "note", s.Note, "line", line)
		}
	}
	return p.start()
}

// progress is a running display.
type progress struct {
	stop chan struct{}
	done sync.WaitGroup
	// run is the display's loop, started by start; plain writes a line
	// when stderr is no terminal (set before start).
	run   func()
	plain func(s progressSample, line string)
}

// start runs the display.
func (p *progress) start() *progress {
	p.done.Add(1)
	go p.run()
	return p
}

// Stop ends the display: a terminal's line is cleared, a plain display
// prints its last line.
func (p *progress) Stop() {
	close(p.stop)
	p.done.Wait()
}

func runProgress(w io.Writer, label string, sample func() progressSample) *progress {
	p := &progress{stop: make(chan struct{})}
	fd, tty := terminalFD(w)
	every := plainEvery
	var tw *termWriter
	if tty {
		every = ttyEvery
		tw = shareTerminal(w).(*termWriter)
	}
	every = progressInterval(every)
	m := newMeter(time.Now())
	p.plain = func(_ progressSample, line string) { fmt.Fprintln(w, line) }
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
					p.plain(s, m.line(label, s, time.Now(), -1))
				}
				return
			case <-t.C:
			}
			s := sample()
			if !tty {
				p.plain(s, m.line(label, s, time.Now(), -1))
				continue
			}
			width := 0
			if cols, _, err := term.GetSize(fd); err == nil {
				width = cols
			}
			tw.draw(m.fitLine(label, s, time.Now(), frame, width))
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

// shareTerminal returns the writer of terminal w shared with progress
// displays, or w itself when w is no terminal.
func shareTerminal(w io.Writer) io.Writer {
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

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
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

// progressInterval is def, or CAIRN_PROGRESS_INTERVAL when that is a
// positive duration.
func progressInterval(def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(progressIntervalEnv)); err == nil && d > 0 {
		return d
	}
	return def
}
