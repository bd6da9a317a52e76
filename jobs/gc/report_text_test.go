package gc

import (
	"strings"
	"testing"
	"time"
)

// TestReportText: a run's text report: state, cutoff, both phases, what
// was removed, pending and on disk; a run that failed before phase 1
// ends after the error.
func TestReportText(t *testing.T) {
	cut := time.Date(2026, 1, 1, 0, 0, 0, 0, time.Local)
	r := Report{UPID: "U\x1b1", State: StateOK, Cutoff: cut, AtimeCutoffSeconds: 86400, IndexFileCount: 2, ChunkRefs: 9,
		ChunksTouched: 5, Phase1Seconds: 1.25, Phase2Seconds: 0.5, ChunkFiles: 7, RemovedChunks: 2, RemovedBytes: 2048,
		PendingChunks: 1, PendingBytes: 1024, DiskChunks: 5, DiskBytes: 4096, IndexDataBytes: 8192, DedupFactor: 2}
	var b strings.Builder
	r.WriteText(&b)
	for _, want := range []string{"gc U\\x1b1: ok\n", "  cutoff    atime before 2026-01-01 00:00:00 (atime cutoff 24h0m0s)\n",
		"  phase 1   2 index files, 9 chunk references, 5 chunks touched, 0 missing, in 1.25s\n", "  phase 2   7 files in 500ms\n",
		"  removed   2 chunks, 0 bad, 0 temporary: 2.0 KiB\n", "  pending   1 chunks, 1.0 KiB (unused, but newer than the cutoff)\n",
		"cairn gc --atime-cutoff 0\n", "  on disk   5 chunks, 4.0 KiB for 8.0 KiB of data: deduplication factor 2.00\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Report{UPID: "U2", State: "failed", Error: "no store"}.WriteText(&b)
	if b.String() != "gc U2: failed\n  error     no store\n" {
		t.Errorf("failed run: %q", b.String())
	}
}
