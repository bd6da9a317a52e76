package cli

import (
	"github.com/spf13/cobra"

	"github.com/cairnfs/cairn/serve"
	"github.com/cairnfs/cairn/serve/config"
	"github.com/cairnfs/cairn/serve/setup"
)

// loadServeConfig reads --config; the configuration's store is used when
// neither --store nor $CAIRN_STORE names one.
func (a *app) loadServeConfig(cmd *cobra.Command, o serveOpts) (*config.Config, error) {
	cfg, err := config.Load(o.config)
	if err != nil {
		return nil, err
	}
	if cfg.Store != "" && !cmd.Flags().Changed("store") && a.getenv("CAIRN_STORE") == "" {
		a.storeDir = cfg.Store
	}
	return cfg, nil
}

// serveConfig is what cairn serve runs: the jobs, watched groups and
// notifications of the configuration; the listener and the mount of the
// flags, else of the configuration. It is called again on SIGHUP; what it
// returns then replaces the jobs, watched groups and notifications, and
// an error keeps them.
func (a *app) serveConfig(cmd *cobra.Command, o serveOpts) (serve.Options, *config.Config, error) {
	cfg, err := a.loadServeConfig(cmd, o)
	if err != nil {
		return serve.Options{}, nil, err
	}
	listen, mount := o.listen, o.mount
	if !cmd.Flags().Changed("listen") {
		listen = cfg.HTTP.Listen
	}
	if listen == config.ListenOff {
		listen = ""
	}
	if mount == "" {
		mount = cfg.Mount.Dir
	}
	return serve.Options{StoreName: a.storeDir, State: cfg.StateDir(a.storeDir), Jobs: setup.Jobs(cfg),
		Stale: setup.Stale(cfg), Listen: listen, Mount: mount, Logger: a.logger}, cfg, nil
}
