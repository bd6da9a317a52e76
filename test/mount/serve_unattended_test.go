package test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cairnfs/cairn/internal/chromiumtest"
	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// unattendedFor is how long TestServeUnattended lets the daemon run.
const unattendedFor = time.Minute

// hooks records the webhook calls the daemon makes.
type hooks struct {
	mu     sync.Mutex
	bodies []string
}

func (h *hooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, string(body))
	h.mu.Unlock()
}

func (h *hooks) calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

// fakeSendmail is a sendmail that keeps each message it is given as a
// file in dir.
func fakeSendmail(t *testing.T, dir string) string {
	path := filepath.Join(t.TempDir(), "sendmail")
	e2e.Write(t, path, fmt.Sprintf("#!/bin/sh\nf=$(mktemp %s/mail-XXXXXX)\necho \"$@\" > \"$f.args\"\ncat > \"$f\"\n", dir), 0o755)
	return path
}

// unattendedStore is a store with a good image (vm/101), one whose
// chunks are corrupt (vm/100), a group that stopped two days ago
// (host/gone) and one the daemon backs up (host/web, SRC), and an S3
// store with an image (vm/200) for the sync job.
func unattendedStore(t *testing.T) (st, src, s3dir string) {
	st = filepath.Join(e2e.TmpfsDir(t, "cairn-e2e-unattended-"), "store")
	e2e.MustCairn(t, "--store", st, "init", "-q")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.img")
	e2e.Write(t, bad, string(e2e.RandBytes(1<<20, 100)), 0o644)
	e2e.MustCairn(t, "--store", st, "backup", "-q", "--type", "vm", "--id", "100", "disk.img:"+bad)
	chunks, _ := filepath.Glob(filepath.Join(st, ".chunks", "*", "*"))
	if len(chunks) == 0 {
		t.Fatal("no chunk after an image backup")
	}
	for _, c := range chunks { // all vm/100's: the store had no other
		data, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0xff
		e2e.Write(t, c, string(data), 0o644)
	}
	good := filepath.Join(dir, "good.img")
	e2e.Write(t, good, string(e2e.RandBytes(1<<20, 101)), 0o644)
	e2e.MustCairn(t, "--store", st, "backup", "-q", "--type", "vm", "--id", "101", "disk.img:"+good)
	old := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)
	e2e.MustCairn(t, "--store", st, "backup", "-q", "--type", "host", "--id", "gone", "--time", old, "conf.blob:"+good)
	src = filepath.Join(dir, "src")
	e2e.WriteTree(t, src, map[string]string{"a.txt": "a\n", "d/b.txt": strings.Repeat("b", 5000)})
	e2e.MustCairn(t, "--store", st, "backup", "-q", "--type", "host", "--id", "web", "root.pxar:"+src)

	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	s3dir = filepath.Join(t.TempDir(), "s3store")
	e2e.MustCairn(t, "--store", s3dir, "init", "-q", "--s3", "s3://"+bucket+"/cairn", "--endpoint", srv.Endpoint,
		"--path-style", "--credentials-file", storetest.CredentialsFile(t, srv))
	img := filepath.Join(dir, "s3.img")
	e2e.Write(t, img, string(e2e.RandBytes(1<<20, 200)), 0o644)
	e2e.MustCairn(t, "--store", s3dir, "backup", "-q", "--type", "vm", "--id", "200", "disk.img:"+img)
	return st, src, s3dir
}

// unattendedConfig schedules a backup every 5 s, prune, gc and a sync
// from S3 several times a minute, and one verify (which fails) 20 s
// from now; it watches host/gone and host/web, and notifies failures
// and staleness by webhook, failures by mail.
func unattendedConfig(t *testing.T, src, s3dir, listen, mnt, hook, sendmail string) string {
	verifyAt := time.Now().Add(20 * time.Second).Format("2006-01-02 15:04:05")
	cfg := fmt.Sprintf(`[http]
listen = %q
[mount]
dir = %q

[[job]]
name = "web"
kind = "backup"
schedule = "*:*:0/5"
group = "host/web"
sources = ["root.pxar:%s"]

[[job]]
name = "verify-once"
kind = "verify"
schedule = %q

[[job]]
kind = "prune"
schedule = "*:*:2/15"
params = { all = true, keep-last = 3 }

[[job]]
kind = "gc"
schedule = "*:*:7/20"

[[job]]
name = "pull"
kind = "sync"
schedule = "*:*:3/20"
params = { from = %q }

[[stale]]
group = "host/gone"
max_age = "1d"

[[stale]]
group = "host/web"
max_age = "1h"

[[notify.webhook]]
url = %q
template = '{"event": {{json .Kind}}, "summary": {{json .Summary}}}'
events = ["failed", "stale"]

[notify.mail]
to = ["admin@example.org"]
sendmail = %q
events = ["failed"]
`, listen, mnt, src, verifyAt, s3dir, hook, sendmail)
	path := filepath.Join(t.TempDir(), "serve.toml")
	e2e.Write(t, path, cfg, 0o600)
	return path
}

// readThrough reads a file and lists a directory through the mount
// until stop is closed, counting reads and errors.
func readThrough(mnt string, stop <-chan struct{}, reads, errs *atomic.Int64, firstErr *atomic.Value) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
		data, err := os.ReadFile(filepath.Join(mnt, "vm", "101", "latest", "disk.img"))
		if err == nil && len(data) != 1<<20 {
			err = fmt.Errorf("read %d bytes of 1 MiB", len(data))
		}
		if err == nil {
			_, err = os.ReadDir(filepath.Join(mnt, "host", "web"))
		}
		reads.Add(1)
		if err != nil {
			errs.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
		}
	}
}

// TestServeUnattended runs `cairn serve` for a minute on a real store
// with a mount, a backup every 5 s, prune, gc, a sync from MinIO and a
// verify that fails on a corrupt chunk, and checks what its admin would
// see: every job ran on its schedule, the mount stayed readable, the
// failure made exactly one webhook call and one mail, the stale group
// one webhook call, /metrics parses and holds the figures, and the
// status page, loaded in headless Chromium, marks the failed job and
// the stale group. Then SIGHUP reloads and SIGTERM stops it.
func TestServeUnattended(t *testing.T) {
	e2e.NeedFUSE(t)
	t.Parallel()
	chromium := chromiumtest.Find(t)
	st, src, s3dir := unattendedStore(t)
	var hk hooks
	hookSrv := httptest.NewServer(&hk)
	defer hookSrv.Close()
	mails := t.TempDir()
	mnt, addr := t.TempDir(), freePort(t)
	cfg := unattendedConfig(t, src, s3dir, addr, mnt, hookSrv.URL+"/hook", fakeSendmail(t, mails))
	started := time.Now()
	s := startServe(t, nil, "--store", st, "serve", "--config", cfg)
	if !e2e.InMountinfo(mnt) {
		t.Fatalf("ready, but %s is not mounted", mnt)
	}

	var reads, errs atomic.Int64
	var firstErr atomic.Value
	stopReads := make(chan struct{})
	readsDone := make(chan struct{})
	go func() {
		defer close(readsDone)
		readThrough(mnt, stopReads, &reads, &errs, &firstErr)
	}()
	time.Sleep(unattendedFor - time.Since(started)) // the daemon's minute: what it does in it is the test
	close(stopReads)
	<-readsDone
	if errs.Load() > 0 || reads.Load() < 10 {
		t.Errorf("reads through the mount: %d, %d failed (first: %v)", reads.Load(), errs.Load(), firstErr.Load())
	}

	checkRuns(t, decodeStatus(t, get(t, "http://"+addr+"/status.json")))
	checkNotified(t, hk.calls(), mails)
	checkMetrics(t, get(t, "http://"+addr+"/metrics"))
	checkStatusPage(t, chromium, "http://"+addr+"/")
	s.reload(t)
	s.stop(t)
	if e2e.InMountinfo(mnt) {
		t.Errorf("%s still mounted after cairn serve exited", mnt)
	}
	if t.Failed() {
		t.Logf("cairn serve's stderr:\n%s", s.stderr.String())
	}
}

// checkRuns: each job ran at the due times of its schedule, with the
// result it should have; its due times in a minute, run or skipped
// (a kind that is still busy skips, as on a loaded machine a backup
// longer than 5 s does), are as many as a minute holds less a few, and
// at least two of them ran well.
func checkRuns(t *testing.T, st statusJSON) {
	type want struct {
		every, offset, min int
		result             string
	}
	wants := map[string]want{"web": {5, 0, 6, "ok"}, "prune": {15, 2, 2, "ok"}, "gc": {20, 7, 2, "ok"}, "pull": {20, 3, 2, "ok"}}
	count, due := map[string]int{}, map[string]int{}
	verifies := 0
	for _, r := range st.Runs {
		if r.Job == "verify-once" {
			verifies++
			if r.Result != "failed" || !strings.Contains(r.Error, "vm/100") {
				t.Errorf("verify-once: %s, %q; want failed on the corrupt chunk", r.Result, r.Error)
			}
			continue
		}
		w, ok := wants[r.Job]
		if !ok {
			t.Errorf("a run of an unknown job %q", r.Job)
			continue
		}
		if (r.Due.Second()-w.offset)%w.every != 0 || r.Start.Before(r.Due) {
			t.Errorf("%s ran at %v for due time %v, not on its schedule", r.Job, r.Start, r.Due)
		}
		due[r.Job]++
		switch r.Result {
		case w.result:
			count[r.Job]++
		case "skipped", "running":
		default:
			t.Errorf("%s: %s %s", r.Job, r.Result, r.Error)
		}
	}
	if verifies != 1 {
		t.Errorf("verify-once ran %d times, want once", verifies)
	}
	for job, w := range wants {
		if due[job] < w.min || count[job] < 2 {
			t.Errorf("%s: %d due times, %d of them ran well; want at least %d and 2 in a minute", job, due[job], count[job], w.min)
		}
	}
}

// checkNotified: one webhook call for the failed verify and one for the
// stale group, nothing for the rest; one mail, about the failure.
func checkNotified(t *testing.T, calls []string, mails string) {
	var failed, stale int
	for _, c := range calls {
		switch {
		case strings.Contains(c, `"event": "failed"`) && strings.Contains(c, "verify-once"):
			failed++
		case strings.Contains(c, `"event": "stale"`) && strings.Contains(c, "host/gone"):
			stale++
		default:
			t.Errorf("webhook call not asked for: %s", c)
		}
	}
	if failed != 1 || stale != 1 {
		t.Errorf("webhook calls: %d for the failed verify, %d for the stale group; want one each: %q", failed, stale, calls)
	}
	msgs, _ := filepath.Glob(filepath.Join(mails, "mail-??????"))
	if len(msgs) != 1 {
		t.Fatalf("%d mails, want one", len(msgs))
	}
	msg, _ := os.ReadFile(msgs[0])
	args, _ := os.ReadFile(msgs[0] + ".args")
	if !bytes.Contains(msg, []byte("To: <admin@example.org>")) || !bytes.Contains(msg, []byte("X-Cairn-Event: failed")) || !bytes.Contains(msg, []byte("verify-once")) || !strings.Contains(string(args), "-t") {
		t.Errorf("the mail (sendmail %s):\n%s", args, msg)
	}
}

// checkMetrics: /metrics parses as Prometheus' text format and has the
// store's, the groups', the jobs' and the mount's figures.
func checkMetrics(t *testing.T, body string) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
	next:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue next
				}
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue(), true
			}
			return m.GetCounter().GetValue(), true
		}
		return 0, false
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		ok     func(float64) bool
	}{
		{"cairn_store_snapshots", nil, func(v float64) bool { return v >= 5 }},
		{"cairn_group_stale", map[string]string{"type": "host", "id": "gone"}, func(v float64) bool { return v == 1 }},
		{"cairn_group_stale", map[string]string{"type": "host", "id": "web"}, func(v float64) bool { return v == 0 }},
		{"cairn_group_last_snapshot_timestamp_seconds", map[string]string{"type": "host", "id": "web"}, func(v float64) bool { return v > float64(time.Now().Add(-time.Minute).Unix()) }},
		{"cairn_group_last_snapshot_bytes", map[string]string{"type": "vm", "id": "101"}, func(v float64) bool { return v >= 1<<20 }},
		{"cairn_job_last_run_result", map[string]string{"job": "verify-once", "result": "failed"}, func(v float64) bool { return v == 1 }},
		{"cairn_job_last_success", map[string]string{"job": "web"}, func(v float64) bool { return v == 1 }},
		{"cairn_job_last_run_duration_seconds", map[string]string{"job": "gc"}, func(v float64) bool { return v > 0 }},
		{"cairn_mount_served_bytes_total", nil, func(v float64) bool { return v >= 1<<20 }}, // the page cache serves the rest
		{"cairn_mount_cache_hits_total", nil, func(v float64) bool { return v > 0 }},
		{"cairn_store_last_gc_timestamp_seconds", nil, func(v float64) bool { return v > float64(time.Now().Add(-2*time.Minute).Unix()) }},
	} {
		if v, ok := value(c.name, c.labels); !ok || !c.ok(v) {
			t.Errorf("metric %s%v = %v (present %v)", c.name, c.labels, v, ok)
		}
	}
}

// checkStatusPage loads the status page in headless Chromium: the failed
// job's row and the stale group's are marked; a screenshot is kept.
func checkStatusPage(t *testing.T, chromium, url string) {
	dom := string(chromiumtest.Run(t, chromium, "--dump-dom", url))
	for what, re := range map[string]string{
		"the failed verify": `<tr class="job failed">\s*<td>verify-once</td>`,
		"the stale group":   `<tr class="group stale">\s*<td>host/gone</td>`,
		"the backup job":    `<tr class="job">\s*<td>web</td>`,
		"the size chart":    `<path class="area stored" d="M`,
	} {
		if !regexp.MustCompile(re).MatchString(dom) {
			t.Errorf("the status page does not show %s (%s)", what, re)
		}
	}
	shot := filepath.Join(chromiumtest.Artifacts(t), "serve-status.png")
	chromiumtest.Run(t, chromium, "--screenshot="+shot, "--window-size=1200,1000", "--hide-scrollbars", url)
	t.Logf("status page screenshot: %s", shot)
}
