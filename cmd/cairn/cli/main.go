package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"sync/atomic"
	"syscall"
	"time"
)

func Main() {
	ctx, stop := notifySignals(context.Background())
	if path := os.Getenv("CAIRN_CPUPROFILE"); path != "" { // for performance work
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
		} else {
			fmt.Fprintf(os.Stderr, "cairn: CAIRN_CPUPROFILE=%s: cannot profile\n", path)
		}
	}
	if path := os.Getenv("CAIRN_TRACE"); path != "" { // for performance work
		if f, err := os.Create(path); err == nil && trace.Start(f) == nil {
			defer f.Close()
		} else {
			fmt.Fprintf(os.Stderr, "cairn: CAIRN_TRACE=%s: cannot trace\n", path)
		}
	}
	processWide = true
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	pprof.StopCPUProfile()
	trace.Stop()
	os.Exit(code)
}

// processWide says the command runs alone in the process (the binary,
// not an in-process Run): it may set the process's default loggers.
var processWide bool

// signalGrace is how long a command has, after the first SIGINT or
// SIGTERM, to wind down on its own before the process exits anyway
// (128+N, a line on stderr). A cancelled command stops within well under
// a second: a backup removes its unfinished snapshot directory, a
// restore its temporary file, a lock is let go; 5 s covers that on a
// loaded machine and is still short beside what a user, timeout(1) or
// systemd (90 s before SIGKILL) waits. What outlives it is stuck in a
// system call the context cannot interrupt (an open(2) of a FIFO that no
// writer opens, a read of a hung network file system); leases on object
// storage not released then expire on their own.
const signalGrace = 5 * time.Second

// graceAfterSignal is the grace of the running command: signalGrace, or
// more for a command that needs more (extendSignalGrace).
var graceAfterSignal atomic.Int64

func init() { graceAfterSignal.Store(int64(signalGrace)) }

// extendSignalGrace gives the running command d more than signalGrace
// after a signal: a mount waits up to d for open files to be closed
// before it aborts the connection.
func extendSignalGrace(d time.Duration) { graceAfterSignal.Store(int64(signalGrace + d)) }

// notifySignals is signal.NotifyContext for SIGINT and SIGTERM with the
// signal recorded as the context's cause (a *signalError), so that run
// can exit 130 or 143. NotifyContext's own cause is only a text. A second
// signal while the command winds down ends the process at once, and so
// does the end of the grace period (graceAfterSignal) after the first.
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var first syscall.Signal
		select {
		case s := <-ch:
			first = s.(syscall.Signal)
			cancel(&signalError{sig: first})
		case <-done:
			return
		}
		grace := time.Duration(graceAfterSignal.Load())
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case s := <-ch:
			fmt.Fprintf(os.Stderr, "cairn: second %s: exiting now\n", signalName(s.(syscall.Signal)))
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-timer.C:
			fmt.Fprintf(os.Stderr, "cairn: %s: still running %v after it (blocked in a system call it cannot interrupt): exiting now, without its cleanup\n",
				signalName(first), grace)
			os.Exit(128 + int(first))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}
