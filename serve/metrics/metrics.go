package metrics

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/serve/runlog"
)

// Metrics exposes a daemon's status as Prometheus metrics.
type Metrics struct {
	// store holds cairn's own metrics only: the textfile collector's
	// file must not describe the process that wrote it.
	store *prometheus.Registry
	// served adds the Go runtime's and the process's metrics for
	// /metrics.
	served *prometheus.Registry
}

// New returns the metrics of the status that status returns and of the
// mount whose counters mount returns (ok false: no mount; mount may be
// nil). Both are called at every scrape, from the scraping goroutine:
// they must be safe for concurrent use.
func New(status func() runlog.Status, mount func() (fs.Stats, bool)) *Metrics {
	c := newCollector(status, mount)
	m := &Metrics{store: prometheus.NewRegistry(), served: prometheus.NewRegistry()}
	m.store.MustRegister(c)
	m.served.MustRegister(c,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus' exposition formats (the
// text format unless the scraper asks for another). A metric that
// cannot be made is left out and the rest served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.served, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
	})
}

// WriteTextfile writes cairn's metrics (without the Go runtime's and
// the process's) in the text format to path, for node_exporter's
// textfile collector: to a temporary file in the same directory, whose
// name does not end in .prom, renamed over path when complete.
func (m *Metrics) WriteTextfile(path string) error {
	if err := prometheus.WriteToTextfile(path, m.store); err != nil {
		return fmt.Errorf("metrics file %s: %w", path, err)
	}
	return nil
}
