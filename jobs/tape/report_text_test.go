package tape

import (
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/jobs"
)

// textHas fails the test for each of want that text lacks.
func textHas(t *testing.T, what, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// TestReportText: the text reports of the tape jobs, with stored names
// escaped.
func TestReportText(t *testing.T) {
	st := jobs.Status{ID: "UPID:x", State: jobs.StateOK, Errors: []string{"bad \x1b thing"}, ErrorCount: 2}
	snaps := []SnapshotResult{{Snapshot: "vm/1/t1", State: StateGone}, {Snapshot: "vm/2/t1", State: StateFailed, Error: "oops"},
		{Snapshot: "vm/3/t1", State: "ok", Archives: []ArchiveClaim{{Tape: "T1", File: 4, State: "refused", Reason: "older"}}}}
	var b strings.Builder
	ExportJobReport{Pool: "p", ChunkOrder: "inode", ExportReport: &ExportReport{MediaSet: "ms", Snapshots: snaps, Chunks: 3, Bytes: 2048},
		SnapshotsOK: 1, Seconds: 1.5, MBps: 2, Next: []string{"label a tape"}}.WriteText(&b, st)
	textHas(t, "export report", b.String(), "tape export UPID:x: ok\n", "  media set  ms (pool p)\n", "  tapes      (none)\n",
		"  chunks     3 written, 2.0 KiB in 1.5s: 2.0 MB/s\n", "  gone       vm/1/t1: removed from the store before it was read\n",
		"failed snapshots:\n  vm/2/t1\n      oops\n", "errors:\n  bad \\x1b thing\n  … and 1 more\n", "next:\n  - label a tape\n")
	b.Reset()
	RestoreJobReport{RestoreReport: &RestoreReport{MediaSet: "ms", Snapshots: snaps, FilesRead: []string{"T1:3"}},
		ArchivesRefused: 1}.WriteText(&b, jobs.Status{ID: "U2", State: jobs.StateOK})
	textHas(t, "restore report", b.String(), "tape restore U2: ok\n", "; 1 snapshot archive(s) refused\n", "  tape files T1:3\n",
		"snapshots claimed by several archives:\n  vm/3/t1\n      tape T1 file 4: refused: older\n")
	b.Reset()
	seq := uint64(2)
	DriveStatus{Drive: "/d", Tapes: []TapeStatus{{Label: "T1", UUID: "u", SeqNr: &seq, Used: 50, Capacity: 100, Loaded: true}, {Label: "T2"}},
		MediaSets: []SetStatus{{UUID: "ms", Pool: "p", Created: time.Unix(0, 0).UTC(), Error: "bad\ncatalog"}}}.WriteText(&b)
	textHas(t, "drive status", b.String(), "drive /d\n", "writable, loaded", "50 B (50%)", "T2", "unlabelled",
		"media sets:\n  ms  pool p, created 1970-01-01T00:00:00Z, tapes (none): 0 snapshots, 0 chunks\n      error: bad\\ncatalog\n")
	b.Reset()
	WriteCatalogs(&b, []CatalogSet{{UUID: "ms", Pool: "p", Tapes: []CatalogTape{{Label: "T1", SeqNr: 0, Files: []CatalogFile{
		{File: 1, Kind: FileLabel}, {File: 3, Kind: FileChunkArchive, Store: "s", Chunks: 9}, {File: 4, Kind: FileSnapshot, Store: "s", Snapshot: "vm/1/t1"}}}},
		Snapshots: []CatalogSnapshot{{Store: "s", Snapshot: "vm/1/t1", Tape: "T1", File: 4}}}})
	textHas(t, "catalogs", b.String(), "media set ms (pool p, 1 tapes)\n", "    file 1    media set label\n",
		"    file 3    chunk archive     s: 9 chunks\n", "    file 4    snapshot archive  s:vm/1/t1\n", "  snapshots:\n    s:vm/1/t1  tape T1 file 4\n")
	b.Reset()
	WriteCatalogs(&b, nil)
	if b.String() != "no media sets\n" {
		t.Errorf("no catalogs: %q", b.String())
	}
}
