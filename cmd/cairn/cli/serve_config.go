package cli

import "github.com/cairnfs/cairn/serve"

// serveConfig is what cairn serve runs, from its flags: the store is
// --store's (opened by the caller), the listener --listen's, the mount
// --mount's. It is called again on SIGHUP; what it returns then replaces
// the jobs, watched groups and notifier, and an error keeps them.
func (a *app) serveConfig(o serveOpts) (serve.Options, error) {
	return serve.Options{StoreName: a.storeDir, Listen: o.listen, Mount: o.mount, Logger: a.logger}, nil
}
