package setup

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/internal/logtest"
	"github.com/cairnfs/cairn/serve/metrics"
	"github.com/cairnfs/cairn/serve/notify"
	"github.com/cairnfs/cairn/serve/runlog"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// hook is a webhook endpoint that records the summaries it was sent;
// while gate is open (not nil and not closed) each request waits on it.
type hook struct {
	*httptest.Server
	got chan string
}

func newHook(t *testing.T, gate chan struct{}) *hook {
	h := &hook{got: make(chan string, 10)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body) // before waiting: the server sees a client go only once the body is read
		if gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		h.got <- string(b)
	}))
	t.Cleanup(h.Close)
	return h
}

func hookOpts(url string) notify.Options {
	return notify.Options{Webhooks: []notify.Webhook{{URL: url, Template: "{{.Summary}}", Events: []string{"failed"}}},
		Attempts: 1}
}

func failed(summary string) runlog.Event {
	return runlog.Event{Kind: runlog.EventFailed, Time: time.Now(), Summary: summary, Run: &runlog.Run{Job: "j", Kind: "verify"}}
}

// received is what h got, in order, once n requests came.
func (h *hook) received(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		select {
		case s := <-h.got:
			out = append(out, s)
		case <-t.Context().Done():
			t.Fatalf("%d of %d notifications came: %q", len(out), n, out)
		}
	}
	return out
}

// TestNotifierSwap: after a reload, events go to the new destinations
// only; what the old ones still held is delivered, and Close waits for
// it.
func TestNotifierSwap(t *testing.T) {
	gate := make(chan struct{})
	old, cur := newHook(t, gate), newHook(t, nil)
	log, _ := logtest.Logger()
	n := NewNotifier(hookOpts(old.URL), log)
	n.Notify(failed("before 1"))
	n.Notify(failed("before 2"))
	n.Swap(hookOpts(cur.URL), time.Minute)
	n.Notify(failed("after"))
	if got := cur.received(t, 1); got[0] != "after" {
		t.Fatalf("new destination got %q", got)
	}
	closed := make(chan error, 1)
	go func() { closed <- n.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the old destination still held two events", err)
	case s := <-old.got:
		t.Fatalf("old destination answered %q before it was let go", s)
	default:
	}
	close(gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if len(old.got) != 2 || len(cur.got) != 0 {
		t.Fatalf("after Close: old destination got %d, new %d more; want 2 and 0", len(old.got), len(cur.got))
	}
	if got := old.received(t, 2); got[0] != "before 1" || got[1] != "before 2" {
		t.Fatalf("old destination got %q", got)
	}
}

// TestNotifierDrainBound: an old destination that never answers is
// given up after the drain time, logged, and Close does not hang on it.
func TestNotifierDrainBound(t *testing.T) {
	never := newHook(t, make(chan struct{}))
	cur := newHook(t, nil)
	log, logs := logtest.Logger()
	n := NewNotifier(hookOpts(never.URL), log)
	n.Notify(failed("lost"))
	n.Swap(hookOpts(cur.URL), 50*time.Millisecond)
	if err := n.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if logs.Count("notifications of the previous configuration not all delivered") != 1 {
		t.Fatalf("log:\n%s", logs)
	}
}

// TestTextfile: the metrics file is written at once and on every tick;
// a write that keeps failing is logged once, its recovery once, and the
// file is whole Prometheus text after each rename.
func TestTextfile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cairn.prom")
	if err := os.Mkdir(path, 0o755); err != nil { // a directory in the way: every rename fails
		t.Fatal(err)
	}
	var reads atomic.Int64
	m := metrics.New(func() runlog.Status {
		reads.Add(1)
		return runlog.Status{Store: "/srv/store"}
	}, func() (fs.Stats, bool) { return fs.Stats{}, false })
	log, logs := logtest.Logger()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { Textfile(ctx, m, path, time.Millisecond, log); close(done) }()
	for reads.Load() < 5 { // five failed writes
		time.Sleep(time.Millisecond)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	for logs.Count("metrics file written again") == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if n := logs.Count("metrics file not written"); n != 1 {
		t.Fatalf("failure logged %d times:\n%s", n, logs)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil || len(fams) == 0 {
		t.Fatalf("metrics file: %d families, %v", len(fams), err)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 1 {
		t.Fatalf("left in the directory: %q", names)
	}
}
