package notify

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/logtest"
	"github.com/cairnfs/cairn/serve/runlog"
)

// The templates of doc.go's examples.
const (
	ntfyBody   = "{{.Summary}}{{with .Run}}{{if .Error}}\n{{.Error}}{{end}}{{end}}"
	gotifyBody = `{"title": {{json (printf "cairn %s: %s" .Kind .Store)}}, "message": {{json .Summary}}, ` +
		`"priority": {{if eq .Kind "failed" "stale"}}8{{else}}4{{end}}}`
	slackBody = `{"text": {{json (printf "%s (%s)" .Summary .Host)}}}`
	hcURL     = `/UUID{{if eq .Kind "failed"}}/fail{{else if eq .Kind "started"}}/start{{end}}`
	hcSlugURL = `/PING_KEY/cairn-{{with .Run}}{{urlquery .Job}}{{end}}{{if eq .Kind "failed"}}/fail{{else if eq .Kind "started"}}/start{{end}}`
)

func staleEvent() runlog.Event {
	g := &runlog.Group{Type: "host", ID: "web", Newest: t0.Add(-50 * time.Hour), Snapshots: 3, MaxAge: 26 * time.Hour}
	return runlog.Event{Kind: runlog.EventStale, Time: t0, Store: "/srv/store", Host: "backup1", Group: g,
		Summary: "host/web is stale: newest snapshot 50h ago"}
}

// TestTemplateStyles sends the same events to a default JSON webhook
// and to the four services' templates, and checks what each endpoint
// received.
func TestTemplateStyles(t *testing.T) {
	plain, ntfy, gotify, slack, hc := newEndpoint(t, nil), newEndpoint(t, nil), newEndpoint(t, nil), newEndpoint(t, nil), newEndpoint(t, nil)
	slug := newEndpoint(t, nil)
	opts := Options{Webhooks: []Webhook{
		{Name: "plain", URL: plain.URL},
		{Name: "ntfy", URL: ntfy.URL + "/cairn-alerts", ContentType: "text/plain; charset=utf-8", Template: ntfyBody,
			Headers: map[string]string{"Title": "cairn {{.Kind}} on {{oneline .Host}}",
				"Priority": `{{if eq .Kind "failed" "stale"}}high{{else}}default{{end}}`,
				"Tags":     `{{if eq .Kind "failed" "stale"}}warning{{else}}white_check_mark{{end}}`}},
		{Name: "gotify", URL: gotify.URL + "/message", Template: gotifyBody, Headers: map[string]string{"X-Gotify-Key": "secret"}},
		{Name: "slack", URL: slack.URL + "/services/T/B/X", Template: slackBody},
		{Name: "hc", URL: hc.URL + hcURL, Template: "{{.Summary}}", Events: []string{"started", "succeeded", "Failed"}},
		{Name: "hc-slug", URL: slug.URL + hcSlugURL, Events: []string{"started", "succeeded", "failed"}},
	}}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	d := New(quick(opts), nil)
	failed := failedEvent()
	for _, ev := range []runlog.Event{failed, runEvent(runlog.EventStarted, "home"), runEvent(runlog.EventSucceeded, "home"), staleEvent()} {
		d.Notify(ev)
	}
	closeNow(t, d)

	r := plain.next(t)
	var got runlog.Event
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.method != "POST" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("default webhook: %s %q %v: want a POST of the Event as JSON", r.method, r.body, err)
	}
	if got.Kind != runlog.EventFailed || got.Summary != failed.Summary || got.Run == nil || got.Run.Error != failed.Run.Error {
		t.Errorf("default webhook got %+v", got)
	}
	if r = plain.next(t); !strings.Contains(r.body, `"event":"stale"`) {
		t.Errorf("default webhook's second request %q, want the stale event", r.body)
	}
	plain.none(t) // started and succeeded are not sent by default

	r = ntfy.next(t)
	if r.path != "/cairn-alerts" || r.body != failed.Summary+"\n"+failed.Run.Error ||
		r.header.Get("Title") != "cairn failed on backup1" || r.header.Get("Priority") != "high" || r.header.Get("Tags") != "warning" {
		t.Errorf("ntfy got %s %q, Title %q, Priority %q", r.path, r.body, r.header.Get("Title"), r.header.Get("Priority"))
	}
	if r = ntfy.next(t); r.body != staleEvent().Summary {
		t.Errorf("ntfy's stale body %q", r.body)
	}

	r = gotify.next(t)
	var msg struct {
		Title, Message string
		Priority       int
	}
	if err := json.Unmarshal([]byte(r.body), &msg); err != nil {
		t.Fatalf("gotify body %q: %v", r.body, err)
	}
	if msg.Title != "cairn failed: /srv/store" || msg.Message != failed.Summary || msg.Priority != 8 || r.header.Get("X-Gotify-Key") != "secret" {
		t.Errorf("gotify got %+v, key %q", msg, r.header.Get("X-Gotify-Key"))
	}

	r = slack.next(t)
	var text struct{ Text string }
	if err := json.Unmarshal([]byte(r.body), &text); err != nil || text.Text != failed.Summary+" (backup1)" {
		t.Errorf("slack body %q: %v", r.body, err)
	}

	for _, want := range []string{"/UUID/fail", "/UUID/start", "/UUID"} { // in the order notified
		if r = hc.next(t); r.path != want {
			t.Errorf("healthchecks ping %s, want %s", r.path, want)
		}
	}
	hc.none(t)
	for _, want := range []string{"/PING_KEY/cairn-nightly/fail", "/PING_KEY/cairn-home/start", "/PING_KEY/cairn-home"} {
		if r = slug.next(t); r.path != want {
			t.Errorf("healthchecks slug ping %s, want %s", r.path, want)
		}
	}
	slug.none(t)
}

// TestRetry: an endpoint that fails twice is delivered to on the third
// attempt; one that always fails is given up after Attempts, logged.
func TestRetry(t *testing.T) {
	calls := 0 // the handler runs one request at a time: the dispatcher sends in order
	flaky := newEndpoint(t, func(*http.Request) int {
		calls++
		if calls < 3 {
			return 500
		}
		return 200
	})
	down := newEndpoint(t, func(*http.Request) int { return 503 })
	log, logs := logtest.Logger()
	opts := quick(Options{Attempts: 5, Webhooks: []Webhook{{Name: "flaky", URL: flaky.URL}, {Name: "down", URL: down.URL}}})
	opts.Attempts = 4
	d := New(opts, log)
	d.Notify(failedEvent())
	closeNow(t, d)
	for range 3 {
		flaky.next(t)
	}
	flaky.none(t)
	for range 4 {
		down.next(t)
	}
	down.none(t)
	if calls != 3 {
		t.Errorf("flaky endpoint called %d times, want 3", calls)
	}
	out := logs.String()
	if n := logs.Count("will retry"); n != 2+3 {
		t.Errorf("%d retries logged, want 5:\n%s", n, out)
	}
	if logs.Count(`msg="notification not delivered" to=down`) != 1 || !strings.Contains(out, "503 Service Unavailable") {
		t.Errorf("giving up is not logged once with the answer:\n%s", out)
	}
	if strings.Contains(out, down.URL) {
		t.Errorf("the log shows the URL (it may hold a token):\n%s", out)
	}
}

// TestHangingEndpoint: an endpoint that never answers costs each
// attempt its timeout and is given up; the other destination gets
// every event meanwhile.
func TestHangingEndpoint(t *testing.T) {
	hang := newEndpoint(t, func(r *http.Request) int {
		<-r.Context().Done()
		return 0
	})
	good := newEndpoint(t, nil)
	log, logs := logtest.Logger()
	opts := quick(Options{Timeout: time.Minute, // the good endpoint's, generous: never reached under load
		Webhooks: []Webhook{{Name: "hang", URL: hang.URL, Timeout: 200 * time.Millisecond}, {Name: "good", URL: good.URL, Template: "{{.Summary}}"}}})
	opts.Attempts = 2
	d := New(opts, log)
	d.Notify(runEvent(runlog.EventFailed, "a"))
	d.Notify(runEvent(runlog.EventFailed, "b"))
	if r := good.next(t); r.body != "a failed" {
		t.Errorf("first %q", r.body)
	}
	if r := good.next(t); r.body != "b failed" {
		t.Errorf("second %q", r.body)
	}
	closeNow(t, d)
	good.none(t)
	if n := logs.Count(`msg="notification not delivered" to=hang`); n != 2 {
		t.Errorf("%d events given up on the hanging endpoint, want 2:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "deadline exceeded") {
		t.Errorf("the log does not say the attempts timed out:\n%s", logs)
	}
}

// TestRenderErrors: what a template cannot make is given up at once
// (another attempt would make the same), logged, and the next event
// still goes.
func TestRenderErrors(t *testing.T) {
	e := newEndpoint(t, nil)
	for _, c := range []struct {
		w  Webhook
		ev runlog.Event
	}{
		{Webhook{URL: "ftp://{{.Host}}/x"}, failedEvent()},                                          // not http
		{Webhook{URL: e.URL, Template: "{{.Run.Job}}", Events: []string{"stale"}}, staleEvent()},    // no run in a stale event
		{Webhook{URL: e.URL, Headers: map[string]string{"Title": "{{.Run.Error}}"}}, failedEvent()}, // a line break in a header
		{Webhook{URL: e.URL + "/{{.Host}}", Template: `{{repeat}}`}, failedEvent()},                 // no such function
	} {
		log, logs := logtest.Logger()
		c.w.Events = append(c.w.Events, "failed")
		if err := (Options{Webhooks: []Webhook{c.w}}).Validate(); err != nil {
			if c.w.Template != "{{repeat}}" || !strings.Contains(err.Error(), `"webhook 1": template`) {
				t.Errorf("%+v: %v", c.w, err)
			}
			continue
		}
		d := New(quick(Options{Webhooks: []Webhook{c.w}}), log)
		d.Notify(c.ev)
		d.Notify(runEvent(runlog.EventFailed, "next"))
		closeNow(t, d)
		if logs.Count("will retry") != 0 || !strings.Contains(logs.String(), `event=`+string(c.ev.Kind)+` summary=`+strconv.Quote(c.ev.Summary)+` attempts=1`) {
			t.Errorf("%+v: want the failure logged once, no retry:\n%s", c.w, logs)
		}
		if c.w.URL == e.URL {
			if r := e.next(t); !strings.Contains(r.body, "next") {
				t.Errorf("%+v: the next event's body %q", c.w, r.body)
			}
		}
		e.none(t)
	}
}
