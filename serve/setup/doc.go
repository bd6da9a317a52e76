// Package setup turns a configuration of cairn serve (serve/config) into
// what the daemon runs (serve.Options), and plugs in the parts that
// read the daemon's record:
//
//   - setup.go: Build, the jobs and watched groups of a configuration,
//     its notifications (serve/notify) behind a Notifier that a reload
//     swaps, and the HTTP handlers: the status page and /status.json
//     (serve/status) on /, the metrics (serve/metrics) on /metrics;
//   - textfile.go: Textfile, the metrics written for node_exporter's
//     textfile collector while the daemon runs.
//
// cmd/cairn's serve command loads the configuration, calls Build and
// runs the daemon; a SIGHUP builds the jobs, groups and notifications
// again (Reload).
package setup
