package storesync

import (
	"strings"
	"testing"

	"github.com/cairnfs/cairn/jobs"
)

// TestReportText: sync's text report: stores, counts, vanished
// snapshots, failed snapshots and the job's errors, stored text escaped.
func TestReportText(t *testing.T) {
	r := Report{From: "/a", To: "/b", SnapshotsCopied: 2, SnapshotsFailed: 1, SnapshotsRemoved: 1, ChunksCopied: 3, BytesCopied: 2048,
		ChunksReused: 4, DataBytes: 4096, Seconds: 1.5, Snapshots: []SnapshotResult{{Snapshot: "vm/1/t\x1b", Outcome: Failed, Error: "bad"}}}
	var b strings.Builder
	r.WriteText(&b, jobs.Status{ID: "U1", State: jobs.StateOK, Errors: []string{"e"}})
	for _, want := range []string{"sync U1: ok\n", "  from       /a\n  to         /b\n",
		"  snapshots  2 copied, 0 skipped, 1 failed; vanished: 1 removed, 0 kept\n", "  chunks     3 copied (2.0 KiB), 4 reused\n",
		"  data       4.0 KiB in 1.5 s\n", "  failed     \"vm/1/t\\x1b\": bad\n", "errors:\n  e\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
