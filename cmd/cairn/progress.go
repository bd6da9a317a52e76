package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/sys/unix"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// progress shows how far a long operation is: a bar on a terminal, a
// plain line every plainEvery otherwise. It polls a counter, so the
// workers it watches never wait on it.
type progress struct {
	stop chan struct{}
	done sync.WaitGroup
}

const plainEvery = 10 * time.Second

// startProgress is how every command shows progress on stderr: label,
// bytes done of total (<= 0: unknown), and a note from get. -q shows
// nothing. Stop it before printing a summary.
func (a *app) startProgress(label string, total int64, get func() (int64, string)) display {
	if a.quiet {
		return noProgress{}
	}
	return startProgress(a.stderr, label, total, get)
}

// display is a progress display; Stop ends it.
type display interface{ Stop() }

type noProgress struct{}

func (noProgress) Stop() {}

// startProgress polls get (bytes done, and an extra note) until Stop.
// total <= 0 means unknown.
func startProgress(w io.Writer, label string, total int64, get func() (int64, string)) *progress {
	p := &progress{stop: make(chan struct{})}
	tty := isTerminal(w)
	var bar *progressbar.ProgressBar
	if tty {
		bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label), progressbar.OptionShowBytes(true),
			progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(), progressbar.OptionShowElapsedTimeOnFinish())
	}
	start := time.Now()
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		every := plainEvery
		if tty {
			every = 200 * time.Millisecond
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				if bar != nil {
					bar.Clear()
				}
				return
			case <-t.C:
			}
			n, note := get()
			if bar != nil {
				bar.Set64(n)
				continue
			}
			fmt.Fprintln(w, progressLine(label, n, total, time.Since(start), note))
		}
	}()
	return p
}

func progressLine(label string, n, total int64, el time.Duration, note string) string {
	rate := float64(n) / max(el.Seconds(), 1e-9)
	s := fmt.Sprintf("%s: %s", label, humanize.IBytes(uint64(n)))
	if total > 0 {
		s += fmt.Sprintf(" of %s (%.1f%%)", humanize.IBytes(uint64(total)), 100*float64(n)/float64(total))
		if rate > 0 {
			eta := time.Duration(float64(total-n) / rate * float64(time.Second))
			s += fmt.Sprintf(", ETA %s", eta.Round(time.Second))
		}
	}
	s += fmt.Sprintf(", %.1f MB/s", rate/1e6)
	if note != "" {
		s += ", " + note
	}
	return s
}

// Stop ends the display.
func (p *progress) Stop() {
	close(p.stop)
	p.done.Wait()
}

func mbps(bytes int64, d time.Duration) float64 {
	return float64(bytes) / 1e6 / max(d.Seconds(), 1e-9)
}
