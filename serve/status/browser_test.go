package status

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// chromium finds Debian's chromium; the test skips without it unless
// CAIRN_TEST_REQUIRE_CHROMIUM=1 (as in CI).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CAIRN_TEST_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium not found and CAIRN_TEST_REQUIRE_CHROMIUM=1 (apt-get install chromium)")
	}
	t.Skip("chromium not found (apt-get install chromium)")
	return ""
}

// runChromium runs headless chromium with a profile, caches and home of
// its own under a temporary directory, bounded in time, and returns its
// standard output.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(home, "profile")}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_CACHE_HOME="+home)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.Bytes()[max(0, stderr.Len()-4096):])
	}
	return stdout.Bytes()
}

// artifacts is where the test keeps what a person looks at afterwards:
// $CAIRN_TEST_ARTIFACTS if set, else the test's temporary directory.
func artifacts(t *testing.T) string {
	dir := os.Getenv("CAIRN_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowser loads the page in headless Chromium: the DOM it renders
// shows the failed job and the stale group marked and the chart's
// paths; a screenshot is kept as an artifact.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	srv := serve(t, testStatus())

	dom := runChromium(t, bin, "--dump-dom", srv.URL+"/")
	checkPage(t, parseDOM(t, bytes.NewReader(dom)))

	shot := filepath.Join(artifacts(t), "status-page.png")
	runChromium(t, bin, "--screenshot="+shot, "--window-size=1200,900", "--hide-scrollbars", srv.URL+"/")
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
