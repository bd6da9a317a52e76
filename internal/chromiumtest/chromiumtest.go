// Package chromiumtest runs Debian's headless Chromium for the tests
// that look at a page as a person would (the status page of cairn
// serve): the DOM it renders (--dump-dom) and a screenshot, with a
// profile of its own, no network beyond the page, bounded in time.
package chromiumtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Find returns Chromium's path; the test skips without it unless
// CAIRN_TEST_REQUIRE_CHROMIUM=1 (as in CI), which makes that a failure.
func Find(t testing.TB) string {
	t.Helper()
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

// Run runs headless Chromium (bin, from Find) with args, its profile,
// caches and home under a temporary directory, within three minutes,
// and returns its standard output.
func Run(t testing.TB, bin string, args ...string) []byte {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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

// Artifacts is where a test keeps what a person looks at afterwards
// (screenshots): $CAIRN_TEST_ARTIFACTS if set, else a temporary
// directory of the test.
func Artifacts(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("CAIRN_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
