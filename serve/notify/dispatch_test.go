package notify

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/logtest"
	"github.com/cairnfs/cairn/serve/runlog"
)

// blocking is an endpoint whose handler announces each request on
// entered and answers it only when release is closed.
func blocking(t *testing.T) (e *endpoint, entered chan string, release chan struct{}) {
	entered, release = make(chan string, 100), make(chan struct{})
	e = newEndpoint(t, func(r *http.Request) int {
		entered <- r.URL.Path
		select {
		case <-release:
			return 200
		case <-r.Context().Done():
			return 0
		}
	})
	return e, entered, release
}

// TestQueueOverflow: with one notification in flight and a queue of 2,
// three more drop the oldest queued (logged by its summary); Notify
// never blocks.
func TestQueueOverflow(t *testing.T) {
	e, entered, release := blocking(t)
	log, logs := logtest.Logger()
	d := New(quick(Options{QueueSize: 2, Webhooks: []Webhook{{URL: e.URL + "/{{.Summary}}", Events: []string{"started"}}}}), log)
	d.Notify(runEvent(runlog.EventStarted, "e1"))
	<-entered // e1 is in flight, the queue empty
	for _, job := range []string{"e2", "e3", "e4", "e5"} {
		d.Notify(runEvent(runlog.EventStarted, job))
	}
	close(release)
	closeNow(t, d)
	for _, want := range []string{"/e1 started", "/e4 started", "/e5 started"} {
		if r := e.next(t); r.path != want {
			t.Errorf("delivered %s, want %s", r.path, want)
		}
	}
	e.none(t)
	if logs.Count("queue full") != 2 || !strings.Contains(logs.String(), `summary="e2 started"`) || !strings.Contains(logs.String(), `summary="e3 started"`) {
		t.Errorf("the two dropped notifications are not logged:\n%s", logs)
	}
}

// TestCloseDrains: Close returns once every queued notification is
// delivered; Notify after Close drops and logs, without panicking.
func TestCloseDrains(t *testing.T) {
	e, entered, release := blocking(t)
	log, logs := logtest.Logger()
	d := New(quick(Options{Webhooks: []Webhook{{URL: e.URL + "/{{.Summary}}"}}}), log)
	d.Notify(runEvent(runlog.EventFailed, "a"))
	<-entered
	for _, job := range []string{"b", "c", "d"} {
		d.Notify(runEvent(runlog.EventFailed, job))
	}
	closed := make(chan error)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		closed <- d.Close(ctx)
	}()
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if len(e.got) != 4 {
		t.Errorf("%d notifications delivered when Close returned, want 4", len(e.got))
	}
	d.Notify(runEvent(runlog.EventFailed, "late"))
	if !strings.Contains(logs.String(), `closed" to="webhook 1" event=failed summary="late failed"`) {
		t.Errorf("a notification after Close is not logged as dropped:\n%s", logs)
	}
}

// TestCloseBounded: when the destination hangs, Close returns when its
// context ends, stopping the attempt in flight and logging what is not
// delivered.
func TestCloseBounded(t *testing.T) {
	e, entered, _ := blocking(t)
	log, logs := logtest.Logger()
	d := New(Options{Webhooks: []Webhook{{URL: e.URL}}}, log) // 30s timeouts, 40s backoff
	d.Notify(runEvent(runlog.EventFailed, "a"))
	d.Notify(runEvent(runlog.EventFailed, "b"))
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close with an ended context: %v, want context.Canceled", err)
	}
	out := logs.String()
	if !strings.Contains(out, `not delivered" to="webhook 1" event=failed summary="a failed"`) ||
		!strings.Contains(out, "notifications not delivered: the notifier was stopped") {
		t.Errorf("what was not delivered is not logged:\n%s", out)
	}
	e.none(t)
}

// TestValidate: every class of bad option is refused, naming the
// destination and the field; New leaves such a destination out.
func TestValidate(t *testing.T) {
	ok := Webhook{Name: "w", URL: "https://example.org/hook"}
	mail := func(m Mail) *Mail { return &m }
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Attempts: -1}, "negative"},
		{Options{QueueSize: 1 << 30}, "at most"},
		{Options{Webhooks: []Webhook{{Name: "w"}}}, `webhook "w": url: missing`},
		{Options{Webhooks: []Webhook{{URL: "https://x/{{.Kind"}}}, `webhook "webhook 1": url:`},
		{Options{Webhooks: []Webhook{ok, {Name: "b", URL: "https://x", Template: "{{if}}"}}}, `webhook "b": template:`},
		{Options{Webhooks: []Webhook{{Name: "w", URL: "https://x", Headers: map[string]string{"Bad Name": "x"}}}}, `headers: "Bad Name"`},
		{Options{Webhooks: []Webhook{{Name: "w", URL: "https://x", Headers: map[string]string{"T": "{{nope}}"}}}}, `header T:`},
		{Options{Webhooks: []Webhook{{Name: "w", URL: "https://x", Method: "GET X"}}}, "method:"},
		{Options{Webhooks: []Webhook{{Name: "w", URL: "https://x", Timeout: -time.Second}}}, "timeout: negative"},
		{Options{Webhooks: []Webhook{{Name: "w", URL: "https://x", ContentType: "text/plain\r\nX-Evil: 1"}}}, "content type:"},
		{Options{Webhooks: []Webhook{{Name: "w", URL: "https://x", Events: []string{"failed", "exploded"}}}}, `events: unknown event "exploded"`},
		{Options{Mail: mail(Mail{})}, "mail: to: no recipient"},
		{Options{Mail: mail(Mail{To: []string{"root@example.org\r\nBcc: victim@example.org"}})}, "mail: to:"},
		{Options{Mail: mail(Mail{To: []string{"not an address"}})}, "mail: to:"},
		{Options{Mail: mail(Mail{To: []string{"root@example.org"}, From: "x\nBcc: y@z"})}, "mail: from:"},
		{Options{Mail: mail(Mail{To: []string{"root@example.org"}, Sendmail: "send\nmail"})}, "mail: sendmail:"},
		{Options{Mail: mail(Mail{To: []string{"root@example.org"}, Events: []string{""}})}, "mail: events:"},
	} {
		err := c.opts.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.opts, err, c.want)
		}
		log, logs := logtest.Logger()
		d := New(c.opts, log)
		if len(d.dests) != len(c.opts.Webhooks)-1 && (len(c.opts.Webhooks) > 0 || len(d.dests) != 0) {
			t.Errorf("%+v: %d destinations kept", c.opts, len(d.dests))
		}
		if c.opts.Attempts >= 0 && c.opts.QueueSize < maxQueue && logs.Count("destination left out") != 1 {
			t.Errorf("%+v: the left out destination is not logged:\n%s", c.opts, logs)
		}
		closeNow(t, d)
	}
	good := Options{Webhooks: []Webhook{ok}, Mail: mail(Mail{To: []string{"Ops <ops@example.org>", "root@example.org"}})}
	if err := good.Validate(); err != nil {
		t.Errorf("good options: %v", err)
	}
}
