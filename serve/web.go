package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// HealthPath is the daemon's own handler: 200 "ok" while it serves.
const HealthPath = "/healthz"

// web is the HTTP listener (nil: none).
type web struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// listen serves Options.Handlers and /healthz on Options.Listen, in the
// background; bounded header and idle times, read-only handlers.
func (d *Daemon) listen() (*web, error) {
	if d.opt.Listen == "" {
		return nil, nil
	}
	mux := http.NewServeMux()
	for pattern, h := range d.opt.Handlers {
		if pattern == HealthPath {
			return nil, fmt.Errorf("%w: handler %s is the daemon's own", ErrBadOptions, HealthPath)
		}
		mux.Handle(pattern, h)
	}
	mux.HandleFunc(HealthPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	ln, err := net.Listen("tcp", d.opt.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", d.opt.Listen, err)
	}
	w := &web{ln: ln, done: make(chan struct{}), srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: time.Minute, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10}}
	go func() {
		defer close(w.done)
		if err := w.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.opt.Logger.Error("HTTP listener failed", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return w, nil
}

// addr is the address the listener has ("" without one).
func (w *web) addr() string {
	if w == nil {
		return ""
	}
	return w.ln.Addr().String()
}

// stop shuts the listener down, waiting a few seconds for requests.
func (w *web) stop() {
	if w == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil {
		w.srv.Close()
	}
	<-w.done
}
