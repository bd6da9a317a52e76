package notify

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cairnfs/cairn/serve/runlog"
)

var t0 = time.Date(2026, 12, 5, 2, 0, 0, 0, time.UTC)

// failedEvent is a failed run whose texts hold what breaks naive
// templates: quotes, a backslash, a line break, non-ASCII.
func failedEvent() runlog.Event {
	run := &runlog.Run{Job: "nightly", Kind: "verify", UPID: "UPID:h:1", Due: t0, Start: t0, End: t0.Add(90 * time.Second),
		Result: runlog.ResultFailed, Error: `chunk 0a1b "corrupt"` + "\\\nsecond line", Bytes: 1 << 20, Chunks: 4,
		LogTail: []string{"checking 4 chunks", "chunk 0a1b: digest mismatch — corrupt"}}
	return runlog.Event{Kind: runlog.EventFailed, Time: t0.Add(90 * time.Second), Store: "/srv/store", Host: "backup1", Run: run,
		Summary: `verify "nightly" failed: 1 chunk corrupt (Grüße)`}
}

func runEvent(kind runlog.EventKind, job string) runlog.Event {
	return runlog.Event{Kind: kind, Time: t0, Store: "/srv/store", Host: "backup1", Summary: job + " " + string(kind),
		Run: &runlog.Run{Job: job, Kind: "backup", Start: t0}}
}

// request is what an endpoint received.
type request struct {
	method, path, query string
	header              http.Header
	body                string
}

// endpoint is a real HTTP server that records requests on a channel;
// answer decides each answer (nil: 200).
type endpoint struct {
	*httptest.Server
	got chan request
}

func newEndpoint(t *testing.T, answer func(r *http.Request) int) *endpoint {
	e := &endpoint{got: make(chan request, 100)}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		code := 200
		if answer != nil {
			code = answer(r)
		}
		if code == 0 { // the client gave up
			return
		}
		e.got <- request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header, string(body)}
		w.WriteHeader(code)
	}))
	t.Cleanup(e.Close)
	return e
}

// next waits for the endpoint's next request that was answered.
func (e *endpoint) next(t *testing.T) request {
	t.Helper()
	select {
	case r := <-e.got:
		return r
	case <-t.Context().Done():
		t.Fatal("no request")
	}
	return request{}
}

// none checks that no further request came.
func (e *endpoint) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-e.got:
		t.Errorf("unexpected request %s %s: %s", r.method, r.path, r.body)
	default:
	}
}

// quick are options that retry at once, for tests.
func quick(o Options) Options {
	o.Backoff = time.Millisecond
	o.Attempts = 3
	return o
}

// closeNow drains d with a generous bound, failing the test if it is
// reached.
func closeNow(t *testing.T, d *Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
