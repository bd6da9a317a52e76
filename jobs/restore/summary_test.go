package restore

import (
	"strings"
	"testing"
	"time"
)

// TestSummaries: a tree restore's summary takes the report's figures
// and lists no failure as an empty list; an image restore's text names
// each damaged range, escaped, and the completion line when done.
func TestSummaries(t *testing.T) {
	rep := &TreeReport{Files: 2, Dirs: 1, Bytes: 2e6}
	s := NewTreeSummary(rep, "vm/1/t", "root.pxar", "/etc", "/tmp/x", []string{"*.conf"}, nil, time.Second)
	if s.Files != 2 || s.Dirs != 1 || s.MBps != 2 || s.Failed == nil || s.Include[0] != "*.conf" || s.Archive != "root.pxar" {
		t.Errorf("tree summary %+v", s)
	}
	var b strings.Builder
	ImageSummary{Bytes: 10, ZeroBytes: 4, Seconds: 0.5, MBps: 1, Damaged: []Damage{{Offset: 4096, Length: 512, Err: "bad\x1b"}}}.
		WriteText(&b, true)
	for _, want := range []string{"damaged: offset 4096 length 512 chunk ", ": bad\\x1b\n",
		"restore complete (bytes=10, zeroes=4, duration=0.50s, speed=1.00MB/s)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
