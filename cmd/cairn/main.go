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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
