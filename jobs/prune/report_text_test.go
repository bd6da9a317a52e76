package prune

import (
	"strings"
	"testing"

	"github.com/cairnfs/cairn/jobs"
)

// TestReportText: prune's text report: a line a snapshot with its mark
// and the rule that kept it or what became of it, the counts, and a dry
// run's would-free line.
func TestReportText(t *testing.T) {
	rep := Report{Options: "keep-last 1", Groups: 1, Marks: Counts{Keep: 1, Remove: 3}, Removed: 1, Failed: 1, Skipped: 1,
		Snapshots: []SnapshotResult{{Snapshot: "vm/1/t3", Mark: Keep, Rule: "keep-last"}, {Snapshot: "vm/1/t2", Mark: Remove, Removed: true},
			{Snapshot: "vm/1/t1", Mark: Remove, Error: "busy"}, {Snapshot: "vm/1/t0", Mark: Remove, Skipped: "protected since"}},
		SnapshotsOmitted: 2}
	var b strings.Builder
	rep.WriteText(&b, jobs.Status{ID: "U1", State: jobs.StateOK, Errors: []string{"x\x1b"}})
	for _, want := range []string{"prune U1: ok\n", "  options  keep-last 1\n", "by keep-last", "removed\n", "failed: busy\n",
		"skipped: protected since\n", "  … and 2 more snapshot(s)", "  groups   1: 1 keep, 0 keep-partial, 0 protected, 3 remove\n",
		"  removed  1, skipped 1, failed 1\n", "errors:\n  x\\x1b\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	rep = Report{DryRun: true, Snapshots: []SnapshotResult{{Snapshot: "vm/1/t1", Mark: Remove}},
		WouldFree: &Freed{Chunks: 2, Logical: 2048, FileBytes: 100, Error: "an index"}}
	rep.WriteText(&b, jobs.Status{ID: "U2", State: jobs.StateOK})
	for _, want := range []string{"prune U2: ok (dry run: nothing removed)\n", "would be removed",
		"  would free 2.0 KiB (logical: chunk sizes are not read from object storage; 2 chunks) after gc, and 100 B of snapshot files\n  warning: an index\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "  removed ") {
		t.Errorf("a dry run says what was removed:\n%s", b.String())
	}
}
