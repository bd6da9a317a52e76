package cli

import (
	cfs "github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/serve"
	"github.com/spf13/cobra"
)

type serveOpts struct {
	config, mount, listen string
	checkConfig           bool
}

func (a *app) serveCmd() *cobra.Command {
	var o serveOpts
	cmd := &cobra.Command{
		Use:   "serve [--config FILE] [--mount DIR] [--listen ADDR] [--check-config]",
		Short: "run a store unattended: its scheduled jobs, stale groups, a mount beside them (a daemon for systemd)",
		Long: `Serve runs one store by itself until SIGTERM or SIGINT: the jobs its
configuration schedules (backup, verify, prune, gc, sync, tape export) start
as they fall due, through the same job framework as the mount's .jobs
control files, one job of a kind at a time (a run due while its kind runs is
recorded as skipped); a catch-up job that missed a due time while serve was
down runs once at start. Each run is recorded in the store's .cairn-serve
directory with its result, first error and log tail, and told to the
notifiers; a watched group whose newest finished snapshot is too old is
reported once a day until it has a new one. --mount DIR keeps the store
mounted beside the jobs, so reads go on while they run.

Under systemd (contrib/cairn-serve.service, Type=notify) serve tells when it
is ready and when it stops; SIGHUP reads the configuration again (kept as it
was when the new one is wrong, which is logged); SIGTERM cancels the running
jobs, waits for them, unmounts and exits 0. The HTTP listener (--listen,
loopback by default) answers /healthz. --check-config reads and checks the
configuration and exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "/etc/cairn/serve.toml", "the configuration file")
	f.StringVar(&o.mount, "mount", "", "keep the store mounted on this directory beside the jobs (with its .jobs control tree)")
	f.StringVar(&o.listen, "listen", serve.DefaultListen, "address of the HTTP listener (\"\": none)")
	f.BoolVar(&o.checkConfig, "check-config", false, "check the configuration and the store, start nothing")
	a.lockWaitFlag(cmd)
	return cmd
}

func (a *app) serve(o serveOpts) error {
	opt, err := a.serveConfig(o)
	if err != nil {
		return err
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	opt.Store = s
	if o.checkConfig {
		return serve.Check(opt)
	}
	opt.Reload = func() (serve.Options, error) { return a.serveConfig(o) }
	// After a signal, the running jobs are cancelled (they end within a
	// second) and the unmount waits for open files.
	extendSignalGrace(cfs.DefaultUnmountGrace)
	return serve.Run(a.ctx, opt)
}
