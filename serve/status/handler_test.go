package status

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/serve/runlog"
)

func serve(t *testing.T, st runlog.Status) *httptest.Server {
	srv := httptest.NewServer(Handler(func() runlog.Status { return st }))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, method, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestPage(t *testing.T) {
	srv := serve(t, testStatus())
	resp, body := get(t, "GET", srv.URL+"/")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Error("no content security policy")
	}
	checkPage(t, parseDOM(t, strings.NewReader(body)))
	for _, external := range []string{"src=", "<link", "@import", "url("} {
		if strings.Contains(body, external) {
			t.Errorf("the page loads something (%s)", external)
		}
	}
}

// TestMethods: the page and its JSON answer GET and HEAD only.
func TestMethods(t *testing.T) {
	srv := serve(t, testStatus())
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		for _, path := range []string{"/", "/status.json", "/nope"} {
			resp, _ := get(t, m, srv.URL+path)
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %s, Allow %q; want 405", m, path, resp.Status, resp.Header.Get("Allow"))
			}
		}
	}
	resp, body := get(t, "HEAD", srv.URL+"/")
	if resp.StatusCode != 200 || body != "" {
		t.Errorf("HEAD /: %s with %d bytes", resp.Status, len(body))
	}
	if resp, _ := get(t, "GET", srv.URL+"/nope"); resp.StatusCode != 404 {
		t.Errorf("GET /nope: %s", resp.Status)
	}
	resp, body = get(t, "GET", srv.URL+"/status.json")
	var st runlog.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status.json: %v, %s", err, resp.Header.Get("Content-Type"))
	}
	if st.Store != hostileName || len(st.Series) != 50 || len(st.Runs) != 4 || st.Runs[0].Result != runlog.ResultFailed {
		t.Errorf("status.json: store %q, %d samples, %d runs", st.Store, len(st.Series), len(st.Runs))
	}
}

// pathData is what a chart's path may hold: numbers and commands.
var pathData = regexp.MustCompile(`^[MLZ0-9., -]*$`)

// TestChartSeries: no sample, one, many, and hostile ones (negative,
// huge, all at one time, zero times, out of order, more than the chart
// draws) all give a page with a chart of finite numbers.
func TestChartSeries(t *testing.T) {
	sample := func(at time.Duration, stored, logical int64) runlog.Sample {
		return runlog.Sample{Time: t0.Add(at), StoredBytes: stored, LogicalBytes: logical}
	}
	var many []runlog.Sample
	for i := range 5000 {
		many = append(many, sample(time.Duration(i)*time.Minute, int64(i)<<20, int64(i)<<22))
	}
	for name, c := range map[string]struct {
		series []runlog.Sample
		points int // points of each path; 0: no path
		dots   int
	}{
		"none":   {nil, 0, 0},
		"one":    {[]runlog.Sample{sample(0, 5<<30, 9<<30)}, 1, 2},
		"many":   {many, maxPoints, 0},
		"huge":   {[]runlog.Sample{sample(-time.Hour, math.MaxInt64, 1), sample(0, 1, math.MaxInt64), sample(time.Hour, -5, -9)}, 3, 0},
		"sameT":  {[]runlog.Sample{sample(0, 1, 2), sample(0, 3, 4), sample(0, 5, 6)}, 3, 0},
		"zeroT":  {[]runlog.Sample{{StoredBytes: 1}, sample(0, 2, 2), {StoredBytes: 3}}, 3, 0},
		"unsort": {[]runlog.Sample{sample(time.Hour, 1, 1), sample(-time.Hour, 2, 2), sample(0, 3, 3)}, 3, 0},
	} {
		st := testStatus()
		st.Series = c.series
		_, body := get(t, "GET", serve(t, st).URL)
		svg := byID(parseDOM(t, strings.NewReader(body)), "size-chart")
		if svg == nil {
			t.Errorf("%s: no chart", name)
			continue
		}
		paths := findAll(svg, "path")
		if c.points == 0 {
			if len(paths) != 0 || !strings.Contains(text(svg), "No size history yet") {
				t.Errorf("%s: %d paths, text %q: want none and a note", name, len(paths), text(svg))
			}
			continue
		}
		if len(paths) != 2 {
			t.Errorf("%s: %d paths, want 2", name, len(paths))
			continue
		}
		for _, p := range paths {
			d := attr(p, "d")
			if !pathData.MatchString(d) {
				t.Errorf("%s: path data %.200q", name, d)
			}
			points := strings.Count(d, "L") + strings.Count(d, "M")
			if strings.Contains(attr(p, "class"), "area") {
				points -= 2 // the area's corners on the axis
			}
			if points != c.points {
				t.Errorf("%s: %s has %d points, want %d", name, attr(p, "class"), points, c.points)
			}
		}
		if dots := findAll(svg, "circle"); len(dots) != c.dots {
			t.Errorf("%s: %d dots, want %d", name, len(dots), c.dots)
		}
		for _, n := range findAll(svg, "") {
			for _, a := range n.Attr {
				if strings.Contains(a.Val, "NaN") || strings.Contains(a.Val, "Inf") {
					t.Errorf("%s: %s %s=%q", name, n.Data, a.Key, a.Val)
				}
			}
		}
	}
}

// TestAxisTicks: the axes' labels are round figures above the largest
// value, for any largest value.
func TestAxisTicks(t *testing.T) {
	for top, want := range map[float64]float64{0: 1, 3: 1, 1000: 500, 196 << 30: 50 << 30, 3 << 20: 1 << 20, math.MaxInt64: 2 << 60} {
		if got := byteTick(top); got != want || 4*got < top {
			t.Errorf("byteTick(%v) = %v, want %v", top, got, want)
		}
	}
	for raw, want := range map[float64]float64{0.3: 0.5, 1: 1, 1.5: 2, 4.2: 5, 7: 10, 12: 20} {
		if got := niceStep(raw); math.Abs(got-want) > 1e-9 {
			t.Errorf("niceStep(%v) = %v, want %v", raw, got, want)
		}
	}
}

// TestEmptyStatus: a daemon that knows nothing yet still has a page.
func TestEmptyStatus(t *testing.T) {
	resp, body := get(t, "GET", serve(t, runlog.Status{}).URL)
	if resp.StatusCode != 200 || !strings.Contains(body, "No groups.") || !strings.Contains(body, "No runs yet.") {
		t.Errorf("empty status: %s\n%s", resp.Status, body)
	}
}
