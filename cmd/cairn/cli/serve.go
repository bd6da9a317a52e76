package cli

import (
	"context"
	"sync"
	"time"

	"github.com/spf13/cobra"

	cfs "github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/serve"
	"github.com/cairnfs/cairn/serve/setup"
	"github.com/cairnfs/cairn/store"
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
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "/etc/cairn/serve.toml", "the configuration file")
	f.StringVar(&o.mount, "mount", "", "keep the store mounted on this directory beside the jobs (with its .jobs control tree)")
	f.StringVar(&o.listen, "listen", serve.DefaultListen, "address of the HTTP listener (\"\": none)")
	f.BoolVar(&o.checkConfig, "check-config", false, "check the configuration and the store, start nothing")
	a.lockWaitFlag(cmd)
	return cmd
}

func (a *app) serve(cmd *cobra.Command, o serveOpts) error {
	opt, cfg, err := a.serveConfig(cmd, o)
	if err != nil {
		return err
	}
	nopts, err := setup.NotifyOptions(cfg)
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
	n := setup.NewNotifier(nopts, a.logger)
	var d *serve.Daemon
	handlers, m := setup.Handlers(func() setup.Source { return d })
	opt.Notifier, opt.Handlers = n, handlers
	opt.Reload = func() (serve.Options, error) { return a.serveReload(cmd, o, s, n) }
	if d, err = serve.New(opt); err != nil {
		return err
	}
	// After a signal, the running jobs are cancelled (they end within a
	// second) and the unmount waits for open files.
	extendSignalGrace(cfs.DefaultUnmountGrace)
	ctx, stop := context.WithCancel(a.ctx)
	var textfile sync.WaitGroup
	if cfg.HTTP.MetricsFile != "" {
		textfile.Go(func() { setup.Textfile(ctx, m, cfg.HTTP.MetricsFile, setup.TextfileEvery, a.logger) })
	}
	err = d.Run(a.ctx)
	stop()
	textfile.Wait()
	drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cerr := n.Close(drain); cerr != nil {
		a.logger.Warn("notifications not all delivered", "err", cerr)
	}
	return err
}

// serveReload reads the configuration again (SIGHUP): checked whole
// before its notifications replace the running ones.
func (a *app) serveReload(cmd *cobra.Command, o serveOpts, s *store.Store, n *setup.Notifier) (serve.Options, error) {
	opt, cfg, err := a.serveConfig(cmd, o)
	if err != nil {
		return opt, err
	}
	nopts, err := setup.NotifyOptions(cfg)
	if err == nil {
		opt.Store = s
		err = serve.Check(opt)
	}
	if err != nil {
		return opt, err
	}
	n.Swap(nopts, time.Minute)
	opt.Notifier = n
	return opt, nil
}
