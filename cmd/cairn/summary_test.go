package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/jobs/restore"
)

const mib = 1 << 20

// TestProgressQuiet: -q shows no progress.
func TestProgressQuiet(t *testing.T) {
	var buf bytes.Buffer
	a := &app{stderr: &buf, quiet: true}
	a.startProgress("x", 1, func() (int64, string) { return 1, "" }).Stop()
	if buf.Len() != 0 {
		t.Errorf("-q printed %q", buf.String())
	}
}

func TestTapeExportGroupArgs(t *testing.T) {
	snaps, groups := splitGroups([]string{"vm/1", "ns/a/vm/2", "vm/3/latest", "vm/4/2024-01-01T00:00:00Z", "bad"})
	if strings.Join(groups, " ") != "vm/1 ns/a/vm/2" || strings.Join(snaps, " ") != "vm/3/latest vm/4/2024-01-01T00:00:00Z bad" {
		t.Errorf("snapshots %v, groups %v", snaps, groups)
	}
}

// TestRestoreProgressSample: a tree restore's line counts files of the
// known total and shows no zeroes.
func TestRestoreProgressSample(t *testing.T) {
	st := new(restore.Stats)
	st.Bytes.Store(mib)
	st.ZeroBytes.Store(mib)
	st.Files.Store(3)
	line := progress.NewMeter(time.Now()).Line("restore", treeTotal{archive: "root.pxar", files: 9}.sample(st), time.Now(), -1)
	if !strings.HasPrefix(line, "restore root.pxar: 1.0 MiB, 3 of 9 files") || strings.Contains(line, "zero") {
		t.Errorf("tree restore line %q", line)
	}
}
