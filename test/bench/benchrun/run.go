package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// record is one measurement: one tool, one step, one round.
type record struct {
	Step         string  `json:"step"`
	Label        string  `json:"label,omitempty"`
	Tool         string  `json:"tool"`
	Round        int     `json:"round"`
	Bytes        int64   `json:"bytes,omitempty"`
	WallS        float64 `json:"wall_s"`
	CPUS         float64 `json:"cpu_s"`
	RSSKiB       int64   `json:"rss_kib"`
	Daemon       bool    `json:"daemon,omitempty"`
	ClientCPUS   float64 `json:"client_cpu_s,omitempty"`
	ClientRSSKiB int64   `json:"client_rss_kib,omitempty"`
	Exit         int     `json:"exit"`
	// Set by run.sh after the check: ok, IOPS of fio, n/a reason.
	OK   *bool   `json:"ok,omitempty"`
	IOPS float64 `json:"iops,omitempty"`
	NA   string  `json:"na,omitempty"`
	Note string  `json:"note,omitempty"`
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	dir := fs.String("C", "", "run the command in this directory")
	out := fs.String("o", "", "the command's standard output (default: the -log file)")
	logf := fs.String("log", "", "the command's standard error (and output without -o); default discarded")
	daemon := fs.Int("daemon", 0, "PID of the mount daemon doing the work")
	var r record
	fs.StringVar(&r.Step, "step", "", "step id")
	fs.StringVar(&r.Label, "label", "", "step label")
	fs.StringVar(&r.Tool, "tool", "", "tool")
	fs.IntVar(&r.Round, "round", 0, "round")
	fs.Int64Var(&r.Bytes, "bytes", 0, "bytes the step processes (for MB/s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("run: no command")
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Dir = *dir
	var closers []*os.File
	defer func() {
		for _, f := range closers {
			f.Close()
		}
	}()
	if *logf != "" {
		f, err := os.OpenFile(*logf, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		closers = append(closers, f)
		cmd.Stdout, cmd.Stderr = f, f
	}
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		closers = append(closers, f)
		cmd.Stdout = f
	}
	var before float64
	if *daemon > 0 {
		var err error
		if before, err = procCPU(*daemon); err != nil {
			return err
		}
	}
	start := time.Now()
	err := cmd.Run()
	r.WallS = time.Since(start).Seconds()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return err
	}
	st := cmd.ProcessState
	r.Exit = st.ExitCode()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		r.CPUS = tv(ru.Utime) + tv(ru.Stime)
		r.RSSKiB = ru.Maxrss // KiB on Linux
	}
	if *daemon > 0 {
		after, err := procCPU(*daemon)
		if err != nil {
			return fmt.Errorf("mount daemon %d: %w", *daemon, err)
		}
		hwm, err := procHWM(*daemon)
		if err != nil {
			return fmt.Errorf("mount daemon %d: %w", *daemon, err)
		}
		r.Daemon = true
		r.ClientCPUS, r.ClientRSSKiB = r.CPUS, r.RSSKiB
		r.CPUS, r.RSSKiB = after-before, hwm
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	if r.Exit != 0 {
		return exitError(r.Exit)
	}
	return nil
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// procCPU is utime+stime of process pid in seconds (fields 14 and 15 of
// /proc/PID/stat, in clock ticks of 1/100 s: USER_HZ is 100 on Linux).
func procCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 13 {
		return 0, errors.New("short stat")
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return float64(u+s) / 100, nil
}

// procHWM is VmHWM (peak RSS, KiB) of process pid.
func procHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM")
}
