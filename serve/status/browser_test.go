package status

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/internal/chromiumtest"
)

// TestBrowser loads the page in headless Chromium: the DOM it renders
// shows the failed job and the stale group marked and the chart's
// paths; a screenshot is kept as an artifact.
func TestBrowser(t *testing.T) {
	bin := chromiumtest.Find(t)
	srv := serve(t, testStatus())

	dom := chromiumtest.Run(t, bin, "--dump-dom", srv.URL+"/")
	checkPage(t, parseDOM(t, bytes.NewReader(dom)))

	shot := filepath.Join(chromiumtest.Artifacts(t), "status-page.png")
	chromiumtest.Run(t, bin, "--screenshot="+shot, "--window-size=1200,900", "--hide-scrollbars", srv.URL+"/")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
		t.Errorf("screenshot is %dx%d, want 1200x900", b.Dx(), b.Dy())
	}
	t.Logf("screenshot: %s", shot)
}
