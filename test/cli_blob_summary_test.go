package test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// A blob-only backup's summary says what it read: the blob, not "0 B in
// 0 chunks" (issue 30, point 9).
func TestBlobSummary(t *testing.T) {
	t.Parallel() // a store of its own
	st := e2e.OwnStore(t, "cairn-e2e-")
	r := e2e.CairnStdin(t, nil, []byte("hello world!\n"), "--store", st, "backup", "--type", "host", "--id", "h", "conf.blob:-")
	if r.Code != 0 || !strings.Contains(r.Stdout, "read      13 B from the sources") ||
		!strings.Contains(r.Stdout, "blobs     1, 13 B") || strings.Contains(r.Stdout, "in 0 chunks") {
		t.Fatalf("blob backup: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	j := e2e.CairnStdin(t, nil, []byte("hello again\n"), "--store", st, "backup", "--type", "host", "--id", "h", "--json", "conf.blob:-")
	var sum struct {
		ReadBytes int64 `json:"read_bytes"`
		Blobs     int64 `json:"blobs"`
		BlobBytes int64 `json:"blob_bytes"`
	}
	if err := json.Unmarshal([]byte(j.Stdout), &sum); err != nil || sum.Blobs != 1 || sum.BlobBytes != 12 || sum.ReadBytes != 12 {
		t.Fatalf("--json: %+v, %v: %s", sum, err, j.Stdout)
	}
}

// `cairn snapshots` counts a blob by its decoded size, as the mount
// shows it (it showed the stored file: 25 B for 13 bytes) (issue 30,
// point 9). store's TestSnapIndex* check the snapshot index says the same.
func TestBlobSizeInSnapshots(t *testing.T) {
	t.Parallel() // a store of its own
	st := e2e.OwnStore(t, "cairn-e2e-")
	r := e2e.CairnStdin(t, nil, []byte("hello world!\n"), "--store", st, "backup", "--type", "host", "--id", "h", "conf.blob:-")
	if r.Code != 0 {
		t.Fatalf("backup: exit %d: %s", r.Code, r.Stderr)
	}
	for _, round := range []string{"first listing", "second listing"} {
		var rows []struct {
			Size uint64 `json:"size"`
		}
		out := e2e.MustCairn(t, "--store", st, "snapshots", "--json").Stdout
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Size != 13 {
			t.Fatalf("%s: %v: %s", round, err, out)
		}
		if text := e2e.MustCairn(t, "--store", st, "snapshots").Stdout; !strings.Contains(text, "13 B logical") {
			t.Fatalf("%s:\n%s", round, text)
		}
	}
}
