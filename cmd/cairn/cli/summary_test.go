package cli

import (
	"bytes"
	"strings"
	"testing"
)

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
