package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"

	// registers with store.RegisterRemote: every command opens a store on
	// object storage (remote.json) as it opens a local one (store.Open)
	_ "github.com/cairnfs/cairn/store/s3store"
)

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitPartial = 3 // finished, but some items failed (e.g. unreadable files)
)

// codeError carries a specific exit code out of a command.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// app holds what every command shares.
type app struct {
	ctx       context.Context
	args      []string            // the command line, for habitHint
	getenv    func(string) string // the environment: os.Getenv, or a test's (Run)
	started   bool                // a command's RunE began: errors before it are usage errors
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	storeDir  string
	logger    *slog.Logger
	verbosity int
	quiet     bool          // -q: errors only, no progress, no summary
	logFormat string        // --log-format: text or json
	lockWait  time.Duration // --lock-wait of the commands that take locks
	keyOpts   keyOpts       // --keyfile of the commands that read or write archive data
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
	keys, err := a.loadKeys() // before the store: a key file that fails stops the command first
	if err != nil {
		return nil, err
	}
	s, err := store.OpenWith(a.storeDir, store.OpenOptions{Logger: a.logger}) // the bucket client's retries too
	if err != nil {
		return nil, err
	}
	s.SetLockWait(a.lockWait)
	s.SetKeys(keys)
	return s, nil
}

// lockWaitFlag adds --lock-wait to a command that takes the store's locks.
func (a *app) lockWaitFlag(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&a.lockWait, "lock-wait", 0,
		"how long to wait for a lock another process holds (e.g. 30s, 10m; 0: fail at once, naming the holder)")
}

// run executes the command line args with the process's environment:
// Run with os.Getenv.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Run(ctx, args, os.Getenv, stdin, stdout, stderr)
}

// Run executes the command line args and returns the exit code: 0 ok,
// 1 failure, 2 bad usage, 3 finished with errors, 128+N after signal N
// (130 SIGINT, 143 SIGTERM) when ctx's cause is a *signalError. The
// variables cairn reads (CAIRN_STORE, CAIRN_KEYFILE, the passphrase
// files) come from getenv, and everything a command writes goes to
// stdout and stderr: runs in one process (tests) do not share them.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	stdout, stderr = progress.SyncWriter(stdout), progress.SyncWriter(stderr)
	a := &app{ctx: ctx, args: args, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.rootCmd()
	root.SetArgs(args)
	defer a.wipeKeys()
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && !a.started && !errors.Is(err, errUsage) {
		err = usageErr("%v", err) // found by cobra before the command ran: flags, arguments
	}
	var sig *signalError
	if errors.As(context.Cause(ctx), &sig) && (err != nil || cmd == nil || !endsBySignal[cmd.CommandPath()]) {
		a.interrupted(cmd, sig, err)
		return 128 + int(sig.sig)
	}
	if err == nil {
		return exitOK
	}
	printError(stderr, err)
	a.hint(cmd, root, err)
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	return exitError
}

// printError prints a command's error, a line per line of its message
// (errors.Join), each escaped: an error may quote a name from stored
// data.
func printError(w io.Writer, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "cairn: %s\n", escapeText(line))
	}
}

// hint prints what to do next for the errors that have a known remedy.
func (a *app) hint(cmd, root *cobra.Command, err error) {
	switch {
	case errors.Is(err, store.ErrLocked) && a.lockWait == 0:
		fmt.Fprintf(a.stderr, "cairn: to wait for the lock, give --lock-wait DURATION\n")
	case errors.Is(err, store.ErrNoStore), errors.Is(err, store.ErrNotStore):
		from := "the default, ./cairn-store"
		switch {
		case root.PersistentFlags().Changed("store"):
			from = "from --store"
		case a.getenv("CAIRN_STORE") != "":
			from = "from CAIRN_STORE"
		}
		fmt.Fprintf(a.stderr, "cairn: the store was looked for at %s (%s); choose another with --store DIR or CAIRN_STORE=DIR, or create one there with 'cairn init'\n",
			a.storeDir, from)
	case errors.Is(err, store.ErrKeyMissing):
		fmt.Fprintf(a.stderr, "cairn: give the snapshot's key file with --keyfile FILE ('cairn key show FILE' prints its fingerprint)\n")
	case errors.Is(err, errUsage) && cmd != nil:
		if h := a.habitHint(cmd, err); h != "" { // a habit of restic, borg or PBS
			fmt.Fprintf(a.stderr, "cairn: %s\n", h)
		}
		fmt.Fprintf(a.stderr, "cairn: see '%s --help'\n", cmd.CommandPath())
	}
}

// signalError is the cause of the command context's cancellation by a
// signal (see notifySignals).
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string { return signalName(e.sig) + " received" }

// Is makes a signal's cause a context.Canceled, as the context's Err is.
func (e *signalError) Is(target error) bool { return target == context.Canceled }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// endsBySignal are the commands a signal ends as designed: a mount
// unmounted cleanly, or a daemon stopped cleanly, after SIGTERM
// (systemd's stop) or Ctrl-C exits 0.
var endsBySignal = map[string]bool{"cairn mount": true, "cairn serve": true}

// keptAfterSignal says what an interrupted command leaves, for the
// commands whose error does not say it itself.
var keptAfterSignal = map[string]string{
	"backup":      "no snapshot was made (the unfinished snapshot was removed; chunks already written stay until 'cairn gc')",
	"gc":          "no chunk in use was removed (chunks are removed only after every index was read); run it again to finish",
	"tape export": "the snapshots exported before it are on tape and in the catalog, the one in flight is not; run it again to go on",
}

// interrupted reports a command stopped by a signal: what was kept, and
// the command's own error unless it is only the cancellation.
func (a *app) interrupted(cmd *cobra.Command, sig *signalError, err error) {
	name := "cairn"
	if cmd != nil {
		name = strings.TrimPrefix(cmd.CommandPath(), "cairn ")
	}
	if err == nil {
		fmt.Fprintf(a.stderr, "cairn: %s: %s as it finished; its work is complete\n", name, sig)
		return
	}
	if !errors.Is(err, context.Canceled) {
		printError(a.stderr, err)
	}
	kept := keptAfterSignal[name]
	if kept == "" {
		kept = "stopped before it finished; see above for what was done"
	}
	fmt.Fprintf(a.stderr, "cairn: %s interrupted by %s: %s\n", name, signalName(sig.sig), kept)
}

var errUsage = errors.New("usage")

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

func (a *app) defaultStore() string {
	if s := a.getenv("CAIRN_STORE"); s != "" {
		return s
	}
	return "./cairn-store"
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "cairn",
		Short:         "cairn: a deduplicating backup store you can mount",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.logFormat != "text" && a.logFormat != "json" {
				return usageErr("--log-format %q: want text or json", a.logFormat)
			}
			a.logger = a.newLogger(slog.LevelWarn) // Info with -v: a command's log is warnings and errors
			if processWide {
				slog.SetLogLoggerLevel(slog.LevelWarn) // the binary's one command: the log package's lines (go-fuse's)
				slog.SetDefault(a.logger)              // and slog's default go through its handler too
			}
			a.keyOpts.wanted = cmd.Flags().Lookup("keyfile") != nil // $CAIRN_KEYFILE is for these only
			return nil
		},
	}
	root.PersistentFlags().StringVar(&a.storeDir, "store", a.defaultStore(), "datastore directory (env CAIRN_STORE)")
	root.PersistentFlags().CountVarP(&a.verbosity, "verbose", "v", "more log lines (default: warnings and errors; -v: also INFO lines, job phases and S3 retries; -vv: debug)")
	root.PersistentFlags().BoolVarP(&a.quiet, "quiet", "q", false, "print errors only: no progress, no summary, no warning")
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "text", "log lines as text or json (log/slog)")
	// Every command, in one place; each is built in a file of its own.
	root.AddCommand(a.initCmd(), a.backupCmd(), a.snapshotsCmd(), a.catCmd(), a.lsCmd(), a.findCmd(),
		a.mountCmd(), a.umountCmd(), a.restoreCmd(), a.verifyCmd(), a.tapeCmd(), a.benchCmd(),
		a.forgetCmd(), a.protectCmd(), a.unprotectCmd(), a.notesCmd(), a.pruneCmd(), a.gcCmd(), a.syncCmd())
	root.AddCommand(a.duCmd())                // issue 27
	root.AddCommand(a.diffCmd(), a.dumpCmd()) // issue 14, helper DUMP
	root.AddCommand(a.keyCmd())               // issue 18, helper KEYS
	root.AddCommand(a.serveCmd())             // issue 29
	root.AddCommand(a.versionCmd(), a.genCmd())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	root.Version = buildVersion().Version
	root.SetVersionTemplate("{{.Name}} " + buildVersion().String() + "\n")
	// The streams before the completion command, which takes the
	// root's output when it is made (os.Stdout if none was set yet).
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.InitDefaultHelpCmd()
	a.completionCmd(root)
	setExamples(root)
	a.contract(root)
	return root
}

// contract makes every command of the tree keep the exit-code contract:
// an argument error is a usage error (exit 2), a command group run with
// a command it does not have is one too, and a.started is set once a
// command's own RunE begins (cobra's errors come before it).
func (a *app) contract(c *cobra.Command) {
	for _, sub := range c.Commands() {
		a.contract(sub)
	}
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				cmd.SetOut(a.stderr)
				cmd.Help()
				return usageErr("%s needs a command", cmd.CommandPath())
			}
			msg := ""
			if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 && a.habitHint(cmd, errUsage) == "" {
				msg = "; did you mean " + strings.Join(sug, " or ") + "?"
			}
			return usageErr("unknown command %q for %q%s", args[0], cmd.CommandPath(), msg)
		}
		return
	}
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, in []string) error {
			if err := args(cmd, in); err != nil && !errors.Is(err, errUsage) {
				return usageErr("%s: %v", cmd.CommandPath(), err)
			} else if err != nil {
				return err
			}
			return nil
		}
	}
	switch run := c.RunE; {
	case run != nil:
		c.RunE = func(cmd *cobra.Command, args []string) error {
			a.started = true
			return run(cmd, args)
		}
	case c.Run != nil:
		r := c.Run
		c.Run = func(cmd *cobra.Command, args []string) {
			a.started = true
			r(cmd, args)
		}
	}
}
