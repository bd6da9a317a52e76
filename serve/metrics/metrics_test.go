package metrics

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/serve/runlog"
)

var t0 = time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)

func testStatus() runlog.Status {
	return runlog.Status{
		Store:   "/srv/store",
		Now:     t0,
		Started: t0.Add(-2 * time.Hour),
		Runs: []runlog.Run{
			{Job: "nightly", Kind: "verify", Start: t0.Add(-10 * time.Minute), Result: runlog.ResultRunning},
			{Job: "home", Kind: "backup", Start: t0.Add(-time.Hour), End: t0.Add(-time.Hour + 90*time.Second), Result: runlog.ResultFailed, Bytes: 5000, Chunks: 7, Error: "read /home: EIO"},
			{Job: "nightly", Kind: "verify", Start: t0.Add(-25 * time.Hour), End: t0.Add(-24 * time.Hour), Result: runlog.ResultFailed, Bytes: 1 << 30, Chunks: 400},
			{Job: "home", Kind: "backup", Start: t0.Add(-2 * time.Hour), End: t0.Add(-2*time.Hour + time.Minute), Result: runlog.ResultOK, Bytes: 9000, Chunks: 9},
		},
		Groups: []runlog.Group{
			{Type: "host", ID: "web", Newest: t0.Add(-3 * time.Hour), Snapshots: 12, Bytes: 4096, MaxAge: 26 * time.Hour},
			{Namespace: "lab", Type: "vm", ID: "100", Newest: t0.Add(-50 * time.Hour), Snapshots: 3, Bytes: 1 << 20, MaxAge: 48 * time.Hour},
			{Type: "ct", ID: "new", MaxAge: time.Hour},
		},
		Current: runlog.Sample{Time: t0.Add(-5 * time.Minute), StoredBytes: 1000, LogicalBytes: 3500, Chunks: 42, Snapshots: 15},
		LastGC:  t0.Add(-6 * time.Hour),
		Next:    map[string]time.Time{"nightly": t0.Add(20 * time.Hour), "home": t0.Add(time.Hour)},
	}
}

// scrape gets /metrics from a real server and parses it with
// Prometheus' text parser.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	return parse(t, resp.Body)
}

func parse(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return mfs
}

// value returns the value of the series of name with exactly labels,
// failing the test when there is none.
func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := lookup(mfs, name, labels...)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	return v
}

func lookup(mfs map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.Metric {
		if len(m.Label)*2 != len(labels) {
			continue
		}
		for i := 0; i < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		}
	}
	return 0, false
}

func TestScrapeFigures(t *testing.T) {
	stats := fs.Stats{CacheHits: 10, CacheMisses: 3, ServedBytes: 1234, LoadedBytes: 99, CacheSize: 1 << 28}
	m := New(func() runlog.Status { return testStatus() }, func() (fs.Stats, bool) { return stats, true })
	mfs := scrape(t, m)
	unix := func(d time.Duration) float64 { return float64(t0.Add(d).Unix()) }
	want := []struct {
		name   string
		labels []string
		v      float64
	}{
		{"cairn_daemon_start_time_seconds", nil, unix(-2 * time.Hour)},
		{"cairn_store_info", []string{"store", "/srv/store"}, 1},
		{"cairn_store_stored_bytes", nil, 1000},
		{"cairn_store_logical_bytes", nil, 3500},
		{"cairn_store_chunks", nil, 42},
		{"cairn_store_snapshots", nil, 15},
		{"cairn_store_dedup_ratio", nil, 3.5},
		{"cairn_store_last_gc_timestamp_seconds", nil, unix(-6 * time.Hour)},
		{"cairn_group_last_snapshot_timestamp_seconds", []string{"ns", "", "type", "host", "id", "web"}, unix(-3 * time.Hour)},
		{"cairn_group_last_snapshot_bytes", []string{"ns", "lab", "type", "vm", "id", "100"}, 1 << 20},
		{"cairn_group_snapshots", []string{"ns", "", "type", "host", "id", "web"}, 12},
		{"cairn_group_stale", []string{"ns", "", "type", "host", "id", "web"}, 0},
		{"cairn_group_stale", []string{"ns", "lab", "type", "vm", "id", "100"}, 1},
		{"cairn_group_stale", []string{"ns", "", "type", "ct", "id", "new"}, 1},
		{"cairn_group_max_age_seconds", []string{"ns", "lab", "type", "vm", "id", "100"}, 48 * 3600},
		{"cairn_job_last_run_start_timestamp_seconds", []string{"job", "home", "kind", "backup"}, unix(-time.Hour)},
		{"cairn_job_last_run_duration_seconds", []string{"job", "home", "kind", "backup"}, 90},
		{"cairn_job_last_run_duration_seconds", []string{"job", "nightly", "kind", "verify"}, 600},
		{"cairn_job_last_run_bytes", []string{"job", "home", "kind", "backup"}, 5000},
		{"cairn_job_last_run_chunks", []string{"job", "home", "kind", "backup"}, 7},
		{"cairn_job_last_run_result", []string{"job", "home", "kind", "backup", "result", "failed"}, 1},
		{"cairn_job_last_run_result", []string{"job", "home", "kind", "backup", "result", "ok"}, 0},
		{"cairn_job_last_run_result", []string{"job", "nightly", "kind", "verify", "result", "running"}, 1},
		{"cairn_job_last_success", []string{"job", "home", "kind", "backup"}, 0},
		{"cairn_job_last_success", []string{"job", "nightly", "kind", "verify"}, 0},
		{"cairn_job_last_success_timestamp_seconds", []string{"job", "home", "kind", "backup"}, unix(-2*time.Hour + time.Minute)},
		{"cairn_job_next_run_timestamp_seconds", []string{"job", "home"}, unix(time.Hour)},
		{"cairn_mount_cache_hits_total", nil, 10},
		{"cairn_mount_cache_misses_total", nil, 3},
		{"cairn_mount_served_bytes_total", nil, 1234},
		{"cairn_mount_loaded_bytes_total", nil, 99},
		{"cairn_mount_cache_size_bytes", nil, 1 << 28},
	}
	for _, w := range want {
		if got := value(t, mfs, w.name, w.labels...); got != w.v {
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.v)
		}
	}
	if _, ok := lookup(mfs, "cairn_job_last_success_timestamp_seconds", "job", "nightly", "kind", "verify"); ok {
		t.Error("a job without a good run has a last success time")
	}
	if _, ok := lookup(mfs, "cairn_group_last_snapshot_timestamp_seconds", "ns", "", "type", "ct", "id", "new"); ok {
		t.Error("a group without snapshots has a newest snapshot time")
	}
	if mfs["go_goroutines"] == nil || mfs["process_start_time_seconds"] == nil {
		t.Error("/metrics lacks the Go runtime's or the process's metrics")
	}
}

// TestStatusReadAtScrape: the figures are those of the moment of the
// scrape, and the mount's only while there is one.
func TestStatusReadAtScrape(t *testing.T) {
	st := testStatus()
	mounted := false
	m := New(func() runlog.Status { return st }, func() (fs.Stats, bool) { return fs.Stats{CacheHits: 5}, mounted })
	if mfs := scrape(t, m); mfs["cairn_mount_cache_hits_total"] != nil {
		t.Error("mount metrics without a mount")
	}
	st.Current.Chunks = 43
	mounted = true
	mfs := scrape(t, m)
	if v := value(t, mfs, "cairn_store_chunks"); v != 43 {
		t.Errorf("chunks %v after the status changed, want 43", v)
	}
	if v := value(t, mfs, "cairn_mount_cache_hits_total"); v != 5 {
		t.Errorf("cache hits %v, want 5", v)
	}
	if New(func() runlog.Status { return st }, nil) == nil {
		t.Fatal("New with a nil mount")
	}
}

// TestDescribed: every metric collected is one Describe announced, with
// its labels (a pedantic registry checks), for a full status and a
// hostile one.
func TestDescribed(t *testing.T) {
	for _, st := range []runlog.Status{testStatus(), hostileStatus()} {
		r := prometheus.NewPedanticRegistry()
		r.MustRegister(newCollector(func() runlog.Status { return st }, func() (fs.Stats, bool) { return fs.Stats{}, true }))
		if _, err := r.Gather(); err != nil {
			t.Errorf("store %q: %v", st.Store, err)
		}
	}
}

func TestTextfile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cairn.prom")
	m := New(func() runlog.Status { return testStatus() }, nil)
	for range 2 { // the second replaces the first
		if err := m.WriteTextfile(path); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mfs := parse(t, f)
	if v := value(t, mfs, "cairn_store_chunks"); v != 42 {
		t.Errorf("chunks %v, want 42", v)
	}
	for name := range mfs {
		if !strings.HasPrefix(name, "cairn_") {
			t.Errorf("the textfile holds %s: only cairn's metrics belong there", name)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files after writing, want only cairn.prom", len(entries))
	}
	err = m.WriteTextfile(filepath.Join(dir, "missing", "cairn.prom"))
	if err == nil || !strings.Contains(err.Error(), "missing/cairn.prom") {
		t.Errorf("writing into a missing directory: %v, want an error naming the file", err)
	}
}

// hostileStatus holds invalid UTF-8, groups and jobs listed twice,
// negative and huge figures, zero and reversed times.
func hostileStatus() runlog.Status {
	return runlog.Status{
		Store: "bad\xffname\n\"quoted\"",
		Runs: []runlog.Run{
			{Job: "j\xfe", Kind: "k\"\\", Start: t0, End: t0.Add(-time.Hour), Result: "weird", Bytes: -1, Chunks: math.MaxInt64},
			{Job: "j\xfe", Kind: "k\"\\", Result: runlog.ResultOK},
		},
		Groups: []runlog.Group{
			{Type: "host", ID: "a\xc0", Bytes: -5, Snapshots: -1, MaxAge: -time.Hour},
			{Type: "host", ID: "a\xc0", Bytes: 7},
		},
		Current: runlog.Sample{StoredBytes: -1, LogicalBytes: math.MaxInt64},
		Next:    map[string]time.Time{"": {}, "x\n": t0},
	}
}

// TestHostileStatus: whatever the status holds, a scrape answers and
// parses.
func TestHostileStatus(t *testing.T) {
	mfs := scrape(t, New(hostileStatus, nil))
	if v := value(t, mfs, "cairn_group_last_snapshot_bytes", "ns", "", "type", "host", "id", "a\uFFFD"); v != -5 {
		t.Errorf("a group listed twice: bytes %v, want the first's -5", v)
	}
	if v := value(t, mfs, "cairn_job_last_run_duration_seconds", "job", "j\uFFFD", "kind", "k\"\\"); v != 0 {
		t.Errorf("a run that ended before it started: duration %v, want 0", v)
	}
	if v := value(t, mfs, "cairn_store_dedup_ratio"); v != 0 {
		t.Errorf("dedup of negative stored bytes %v, want 0", v)
	}
}
