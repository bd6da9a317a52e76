package verify

import (
	"strings"
	"testing"

	"github.com/cairnfs/cairn/jobs"
)

// TestReportText: verify's text report: counts, failed snapshots with
// their errors, corrupt chunks, the job's other errors (not those listed
// under a snapshot) and the next steps, stored text escaped.
func TestReportText(t *testing.T) {
	rep := Report{ChunkOrder: "inode", ReadThreads: 2, VerifyThreads: 4, ChunkOrderReason: "rotational", SnapshotsOK: 1,
		SnapshotsFailed: 1, Chunks: 10, ChunksCorrupt: 1, ChunksDecrypted: 3, StoredBytes: 2048, Bytes: 4096, Seconds: 2, MBps: 1.5,
		Snapshots: []SnapshotResult{{Snapshot: "vm/1/t", State: SnapFailed, Errors: []string{"bad\x1b chunk"}, ErrorCount: 3},
			{Snapshot: "vm/2/t", WithoutKey: true, Encryption: "key abc not given"}},
		Corrupt: []CorruptChunk{{Digest: "d1", Reason: "crc", BadPath: "/s/.chunks/d1.0.bad", Snapshots: []string{"vm/1/t"}}},
		Next:    []string{"run a backup"}}
	st := jobs.Status{ID: "U1", State: jobs.StateFailed, Errors: []string{"vm/1/t: bad\x1b chunk", "lock held"}}
	var b strings.Builder
	rep.WriteText(&b, st)
	for _, want := range []string{"verify U1: failed\n", "  snapshots  1 ok, 1 failed, 0 skipped, 0 unfinished (not verified)\n",
		"  chunks     10 checked, 1 corrupt or missing\n", "  encrypted  3 decrypted", "  no key     vm/2/t: key abc not given\n",
		"  data       2.0 KiB read (4.0 KiB plain) in 2s: 1.5 MB/s\n", "  order      inode, 2 read / 4 verify threads (rotational)\n",
		"failed snapshots:\n  vm/1/t\n      bad\\x1b chunk\n      … and 2 more\n",
		"corrupt or missing chunks:\n  d1  crc\n      moved to /s/.chunks/d1.0.bad\n      used by vm/1/t\n",
		"other errors:\n  lock held\nnext:\n  - run a backup\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Report{NothingToVerify: true}.WriteText(&b, jobs.Status{ID: "U2", State: jobs.StateOK})
	if !strings.HasPrefix(b.String(), "verify U2: nothing to verify\n") {
		t.Errorf("nothing to verify:\n%s", b.String())
	}
}
