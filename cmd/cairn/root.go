package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitPartial = 3 // finished, but some items failed (e.g. unreadable files)
)

// exitError carries a specific exit code out of a command.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// app holds what every command shares.
type app struct {
	ctx       context.Context
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	storeDir  string
	logger    *slog.Logger
	verbosity int
	quiet     bool          // -q: errors only, no progress, no summary
	logFormat string        // --log-format: text or json
	lockWait  time.Duration // --lock-wait of the commands that take locks
}

// newLogger returns a logger writing to stderr in the --log-format, at
// level (lowered to Info by -v, to Debug by -vv; raised to Error by -q).
// Every logger of a command is made here.
func (a *app) newLogger(level slog.Level) *slog.Logger {
	switch {
	case a.quiet:
		level = max(level, slog.LevelError)
	case a.verbosity >= 2:
		level = slog.LevelDebug
	case a.verbosity == 1:
		level = min(level, slog.LevelInfo)
	}
	opt := &slog.HandlerOptions{Level: level}
	if a.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(a.stderr, opt))
	}
	return slog.New(slog.NewTextHandler(a.stderr, opt))
}

func (a *app) openStore() (*store.Store, error) {
	if a.lockWait < 0 {
		return nil, usageErr("--lock-wait %s is negative", a.lockWait)
	}
	s, err := store.Open(a.storeDir)
	if err != nil {
		return nil, err
	}
	s.SetLockWait(a.lockWait)
	return s, nil
}

// lockWaitFlag adds --lock-wait to a command that takes the store's locks.
func (a *app) lockWaitFlag(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&a.lockWait, "lock-wait", 0,
		"how long to wait for a lock another process holds (e.g. 30s, 10m; 0: fail at once, naming the holder)")
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "cairn: %v\n", err)
	if errors.Is(err, store.ErrLocked) {
		fmt.Fprintf(stderr, "cairn: to wait for the lock, give --lock-wait DURATION\n")
	}
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	return exitError
}

var errUsage = errors.New("usage")

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

func defaultStore() string {
	if s := os.Getenv("CAIRN_STORE"); s != "" {
		return s
	}
	return "./cairn-store"
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "cairn",
		Short:         "cairn: a deduplicating backup store you can mount",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.logFormat != "text" && a.logFormat != "json" {
				return usageErr("--log-format %q: want text or json", a.logFormat)
			}
			a.logger = a.newLogger(slog.LevelInfo)
			return nil
		},
	}
	root.PersistentFlags().StringVar(&a.storeDir, "store", defaultStore(), "datastore directory (env CAIRN_STORE)")
	root.PersistentFlags().CountVarP(&a.verbosity, "verbose", "v", "more log output (-v: progress notes, -vv: debug)")
	root.PersistentFlags().BoolVarP(&a.quiet, "quiet", "q", false, "print errors only: no progress, no summary")
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "text", "log lines as text or json (log/slog)")
	// Every command, in one place; each is built in a file of its own.
	root.AddCommand(a.initCmd(), a.backupCmd(), a.snapshotsCmd(), a.catCmd(), a.lsCmd(), a.findCmd(),
		a.mountCmd(), a.umountCmd(), a.restoreCmd(), a.verifyCmd(), a.tapeCmd(), a.benchCmd(),
		a.forgetCmd(), a.protectCmd(), a.unprotectCmd(), a.pruneCmd(), a.gcCmd(), a.syncCmd())
	root.AddCommand(a.diffCmd(), a.dumpCmd()) // issue 14, helper DUMP
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	return root
}
