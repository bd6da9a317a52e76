package status

import (
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/cairnfs/cairn/serve/runlog"
)

var t0 = time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)

// hostileName is a store name that must be shown, never run.
const hostileName = `/srv/<script>alert("x")</script>&store`

// testStatus holds a stale group, a failed run and 50 samples.
func testStatus() runlog.Status {
	st := runlog.Status{
		Store: hostileName, Now: t0, Started: t0.Add(-26 * time.Hour), LastGC: t0.Add(-5 * time.Hour),
		Runs: []runlog.Run{
			{Job: "nightly-verify", Kind: "verify", Start: t0.Add(-2 * time.Hour), End: t0.Add(-time.Hour - 50*time.Minute),
				Result: runlog.ResultFailed, Error: "chunk 0a1b2c: digest mismatch <b>corrupt</b>"},
			{Job: "home", Kind: "backup", Start: t0.Add(-3 * time.Hour), End: t0.Add(-3*time.Hour + 95*time.Second), Result: runlog.ResultOK, Bytes: 1 << 30},
			{Job: "nightly-verify", Kind: "verify", Start: t0.Add(-26 * time.Hour), End: t0.Add(-25 * time.Hour), Result: runlog.ResultOK},
			{Job: "gc", Kind: "gc", Start: t0.Add(-time.Minute), Result: runlog.ResultRunning, CatchUp: true},
		},
		Groups: []runlog.Group{
			{Type: "host", ID: "web", Newest: t0.Add(-3 * time.Hour), Snapshots: 40, Bytes: 3 << 30, MaxAge: 26 * time.Hour},
			{Namespace: "lab", Type: "vm", ID: "100", Newest: t0.Add(-74 * time.Hour), Snapshots: 7, Bytes: 20 << 30, MaxAge: 48 * time.Hour},
			{Type: "ct", ID: "unwatched", Newest: t0.Add(-400 * time.Hour), Snapshots: 1, Bytes: 1 << 20},
		},
		Next: map[string]time.Time{"home": t0.Add(time.Hour), "nightly-verify": t0.Add(23 * time.Hour), "prune": t0.Add(2 * time.Hour)},
	}
	for i := range 50 {
		stored := int64(100<<30) + int64(i)*(2<<30) + int64(math.Sin(float64(i)/4)*float64(5<<30))
		st.Series = append(st.Series, runlog.Sample{Time: t0.Add(time.Duration(i-49) * 24 * time.Hour),
			StoredBytes: stored, LogicalBytes: stored * int64(2+i/10), Chunks: int64(1000 + i*10), Snapshots: int64(10 + i)})
	}
	st.Current = st.Series[49]
	return st
}

// parseDOM parses an HTML document.
func parseDOM(t *testing.T, r io.Reader) *html.Node {
	t.Helper()
	doc, err := html.Parse(r)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// findAll returns the elements under n named tag (any: "") that have
// every class of classes.
func findAll(n *html.Node, tag string, classes ...string) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type != html.ElementNode || (tag != "" && d.Data != tag) {
			continue
		}
		have := strings.Fields(attr(d, "class"))
		ok := true
		for _, c := range classes {
			ok = ok && slices.Contains(have, c)
		}
		if ok {
			out = append(out, d)
		}
	}
	return out
}

func byID(n *html.Node, id string) *html.Node {
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && attr(d, "id") == id {
			return d
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// text is the text n shows, spaces collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data + " ")
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// checkPage checks what a rendered page of testStatus shows: the
// failed job and run marked, the stale group marked (the unwatched old
// one not), the chart with its two paths, the store's name as text.
func checkPage(t *testing.T, doc *html.Node) {
	t.Helper()
	stale := findAll(doc, "tr", "group", "stale")
	if len(stale) != 1 || !strings.Contains(text(stale[0]), "ns/lab/vm/100") || !strings.Contains(text(stale[0]), "STALE") {
		t.Errorf("stale group rows: %d, want one for ns/lab/vm/100 saying STALE", len(stale))
	}
	if g := findAll(doc, "tr", "group"); len(g) != 3 {
		t.Errorf("%d group rows, want 3", len(g))
	}
	failed := findAll(byID(doc, "jobs"), "tr", "job", "failed")
	if len(failed) != 1 || !strings.Contains(text(failed[0]), "nightly-verify") || !strings.Contains(text(failed[0]), "FAILED") ||
		!strings.Contains(text(failed[0]), "digest mismatch <b>corrupt</b>") {
		t.Errorf("failed job rows %d, want nightly-verify marked FAILED with its error as text", len(failed))
	}
	if r := findAll(byID(doc, "runs"), "tr", "run", "failed"); len(r) != 1 {
		t.Errorf("%d failed run rows, want 1", len(r))
	}
	jobs := text(byID(doc, "jobs"))
	for _, want := range []string{"prune", "never ran", "in 2h 0m", "running", "1m 35s"} {
		if !strings.Contains(jobs, want) {
			t.Errorf("the jobs table lacks %q: %s", want, jobs)
		}
	}
	svg := byID(doc, "size-chart")
	if svg == nil || svg.Data != "svg" {
		t.Fatal("no svg#size-chart")
	}
	for _, class := range []string{"stored", "dedup"} {
		p := findAll(svg, "path", class)
		if len(p) != 1 || strings.Count(attr(p[0], "d"), "L") < 49 {
			t.Errorf("chart path %s: %d, want one of 50 points", class, len(p))
		}
	}
	if labels := text(svg); !strings.Contains(labels, "GiB") || !strings.Contains(labels, "×") {
		t.Errorf("the chart's axes are not labelled: %q", labels)
	}
	if h := findAll(doc, "span", "store"); len(h) != 1 || text(h[0]) != hostileName {
		t.Errorf("store name shown as %q, want %q", text(h[0]), hostileName)
	}
	if s := findAll(doc, "script"); len(s) != 0 {
		t.Errorf("the page has %d script elements: the store's name ran", len(s))
	}
}
