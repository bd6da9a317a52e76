package restore

import (
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/progress"
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

const mib = 1 << 20

// TestRestoreProgressSample: a tree restore's line counts files of the
// known total and shows no zeroes.
func TestRestoreProgressSample(t *testing.T) {
	st := new(Stats)
	st.Bytes.Store(mib)
	st.ZeroBytes.Store(mib)
	st.Files.Store(3)
	line := progress.NewMeter(time.Now()).Line("restore", TreeTotal{Archive: "root.pxar", Files: 9}.Sample(st), time.Now(), -1)
	if !strings.HasPrefix(line, "restore root.pxar: 1.0 MiB, 3 of 9 files") || strings.Contains(line, "zero") {
		t.Errorf("tree restore line %q", line)
	}
}
