package setup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/serve"
	"github.com/cairnfs/cairn/serve/config"
	"github.com/cairnfs/cairn/serve/metrics"
	"github.com/cairnfs/cairn/serve/notify"
	"github.com/cairnfs/cairn/serve/runlog"
	"github.com/cairnfs/cairn/serve/status"
)

// Source is the daemon as the status page and the metrics read it
// (*serve.Daemon).
type Source interface {
	Status() runlog.Status
	MountStats() (fs.Stats, bool)
}

// Jobs are the configuration's jobs as the daemon takes them.
func Jobs(cfg *config.Config) []serve.JobSpec {
	out := make([]serve.JobSpec, 0, len(cfg.Jobs))
	for _, j := range cfg.Jobs {
		out = append(out, serve.JobSpec{Name: j.Name, Kind: j.Kind, Schedule: j.Schedule, ScheduleText: j.ScheduleText,
			Params: j.Params, Namespace: j.Namespace, Group: j.Group, Sources: j.Sources, CatchUp: j.CatchUp, Line: j.Line})
	}
	return out
}

// Stale are the configuration's watched groups.
func Stale(cfg *config.Config) []serve.StaleSpec {
	out := make([]serve.StaleSpec, 0, len(cfg.Stale))
	for _, s := range cfg.Stale {
		out = append(out, serve.StaleSpec{Namespace: s.Namespace, Group: s.Group, MaxAge: s.MaxAge, Line: s.Line})
	}
	return out
}

// NotifyOptions are the configuration's notification destinations,
// checked (errors name the configuration file).
func NotifyOptions(cfg *config.Config) (notify.Options, error) {
	var o notify.Options
	for _, w := range cfg.Notify.Webhooks {
		o.Webhooks = append(o.Webhooks, notify.Webhook{Name: w.Name, URL: w.URL, Method: w.Method,
			ContentType: w.ContentType, Headers: w.Headers, Template: w.Template, Events: w.Events})
	}
	if m := cfg.Notify.Mail; m != nil {
		o.Mail = &notify.Mail{To: m.To, From: m.From, Sendmail: m.Sendmail, Events: m.Events}
	}
	if err := o.Validate(); err != nil {
		return o, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	return o, nil
}

// Notifier hands events to the notifications of the configuration in
// force: Swap puts a reloaded one in place and closes the old one once
// what it holds is delivered; Close waits for those as well.
type Notifier struct {
	mu       sync.Mutex
	d        *notify.Dispatcher
	log      *slog.Logger
	draining sync.WaitGroup // the replaced dispatchers' Close
}

// NewNotifier starts the notifications of opts.
func NewNotifier(opts notify.Options, log *slog.Logger) *Notifier {
	return &Notifier{d: notify.New(opts, log), log: log}
}

// Notify passes ev on; it never blocks on delivery.
func (n *Notifier) Notify(ev runlog.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.d.Notify(ev)
}

// Swap starts the notifications of opts in place of the current ones,
// which are closed in the background (within drain).
func (n *Notifier) Swap(opts notify.Options, drain time.Duration) {
	n.mu.Lock()
	old := n.d
	n.d = notify.New(opts, n.log)
	n.mu.Unlock()
	n.draining.Go(func() { n.close(old, drain) })
}

// Close delivers what is queued, the replaced configurations' events
// too, within ctx.
func (n *Notifier) Close(ctx context.Context) error {
	n.mu.Lock()
	err := n.d.Close(ctx)
	n.mu.Unlock()
	done := make(chan struct{})
	go func() { n.draining.Wait(); close(done) }()
	select {
	case <-done:
		return err
	case <-ctx.Done():
		return errors.Join(err, fmt.Errorf("notifications of a previous configuration: %w", ctx.Err()))
	}
}

func (n *Notifier) close(d *notify.Dispatcher, drain time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		n.log.Warn("notifications of the previous configuration not all delivered", "err", err)
	}
}

// Handlers are the daemon's HTTP pages: the status page on / (and
// /status.json), the metrics on /metrics. src is read at each request.
func Handlers(src func() Source) (map[string]http.Handler, *metrics.Metrics) {
	st := func() runlog.Status { return src().Status() }
	m := metrics.New(st, func() (fs.Stats, bool) { return src().MountStats() })
	page := status.Handler(st)
	return map[string]http.Handler{"/": page, "/status.json": page, "/metrics": m.Handler()}, m
}
