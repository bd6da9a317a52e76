// Command benchrun is the side-by-side benchmark's (test/bench/run.sh)
// measuring and checking tool; Debian's base system has no /usr/bin/time.
//
//	benchrun run [-C DIR] [-o FILE] [-log FILE] [-daemon PID] [-step S -label L -tool T -round N -bytes B] -- CMD ARG…
//	benchrun manifest DIR          the tree's manifest (sorted lines)
//	benchrun tarmanifest FILE      the same manifest of a tar archive
//	benchrun randcmp [-n N] A B    N random 4 KiB reads of A (O_DIRECT) equal B's
//	benchrun fioiops FILE          total read IOPS of fio's JSON output
//	benchrun table [-header FILE] [-json OUT] RESULTS.jsonl
//
// run prints one JSON record: wall seconds, user+system CPU seconds and
// peak RSS (KiB) of the command and the children it waited for (the
// rusage wait4 returns), and with -daemon PID those of a mount daemon
// that does the work of a command reading through its mount: the
// daemon's CPU is the delta of utime+stime in /proc/PID/stat across the
// command, its peak RSS is VmHWM in /proc/PID/status. The record's cpu_s
// and rss_kib are then the daemon's (the command's are kept as
// client_cpu_s and client_rss_kib). The exit status is the command's.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	args := os.Args[2:]
	switch os.Args[1] {
	case "run":
		err = cmdRun(args)
	case "manifest":
		err = cmdManifest(args)
	case "tarmanifest":
		err = cmdTarManifest(args)
	case "randcmp":
		err = cmdRandCmp(args)
	case "fioiops":
		err = cmdFioIOPS(args)
	case "table":
		err = cmdTable(args)
	default:
		usage()
	}
	if err != nil {
		if e, ok := err.(exitError); ok {
			os.Exit(int(e))
		}
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

// exitError passes a measured command's exit status on.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchrun run|manifest|tarmanifest|randcmp|fioiops|table … (see the package doc)")
	os.Exit(2)
}
