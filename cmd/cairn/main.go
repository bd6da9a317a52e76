package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
)

func main() {
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
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	pprof.StopCPUProfile()
	trace.Stop()
	os.Exit(code)
}

// notifySignals is signal.NotifyContext for SIGINT and SIGTERM with the
// signal recorded as the context's cause (a *signalError), so that run
// can exit 130 or 143. NotifyContext's own cause is only a text. A second
// signal while the command winds down ends the process at once.
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(&signalError{sig: s.(syscall.Signal)})
		case <-done:
			return
		}
		select {
		case s := <-ch:
			fmt.Fprintf(os.Stderr, "cairn: second %s: exiting now\n", signalName(s.(syscall.Signal)))
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}
