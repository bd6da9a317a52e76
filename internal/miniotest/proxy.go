package miniotest

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
)

// Proxy is a reverse proxy on 127.0.0.1 in front of a server that waits
// Delay before forwarding each request: a far-away object store for tests
// and benchmarks of latency. The client's Host header is passed on as it
// is (requests are signed over it).
type Proxy struct {
	delay     atomic.Int64 // time.Duration
	url       string
	srv       *http.Server
	requests  atomic.Int64
	lie       atomic.Pointer[Lie]       // lies.go
	answerLie atomic.Pointer[AnswerLie] // lies.go
	watches   watches                   // watch.go
	gate      gate                      // watch.go
}

// NewProxy starts a proxy to target (http://host:port) adding delay to
// every request; it stops when the test ends.
func NewProxy(t testing.TB, target string, delay time.Duration) *Proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("miniotest: proxy target %q: %v", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("miniotest: proxy: %v", err)
	}
	rp := httputil.NewSingleHostReverseProxy(u) // keeps the client's Host
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	rp.Transport = tr
	p := &Proxy{url: "http://" + ln.Addr().String()}
	// A server behind it that is down answers as a load balancer would:
	// 503 with an S3 error body saying why.
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		p.watches.see(r, unreachable)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code><Message>miniotest proxy: %s</Message></Error>`,
			html.EscapeString(err.Error()))
	}
	rp.ModifyResponse = p.modifyResponse
	p.delay.Store(int64(delay))
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		p.watches.see(r, 0)
		t := time.NewTimer(time.Duration(p.delay.Load()))
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		if !p.gate.pass(r.Context()) {
			return
		}
		if p.lying(w, r) {
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() {
		p.gate.release()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.srv.Shutdown(ctx) //nolint:errcheck // best effort at the test's end
		tr.CloseIdleConnections()
	})
	return p
}

// Endpoint is the proxy's URL, to use as objstore.Config.Endpoint.
func (p *Proxy) Endpoint() string { return p.url }

// SetDelay changes the delay of the requests to come.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// Requests is how many requests the proxy has received.
func (p *Proxy) Requests() int64 { return p.requests.Load() }

// ProxyConfig is the configuration of bucket on s reached through p.
func (s *Server) ProxyConfig(p *Proxy, bucket string) (cfg objstore.Config) {
	cfg = s.Config(bucket)
	cfg.Endpoint = p.Endpoint()
	return cfg
}
