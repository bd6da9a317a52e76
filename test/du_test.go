package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// duJSON is the part of `cairn du --json` the test reads.
type duJSON struct {
	StoredKnown bool `json:"stored_known"`
	Snapshots   []struct {
		Snapshot string `json:"snapshot"`
		Unique   struct {
			Chunks int64 `json:"chunks"`
			Stored int64 `json:"stored"`
		} `json:"unique"`
		Freed int64 `json:"freed"`
	} `json:"snapshots"`
	Errors []string `json:"errors"`
}

// duStore makes a store of its own (gc and prune take its locks) with
// 64 KiB chunks named by letters: host/du has
//
//	t0: A B C   t1: A B D   t2: A G H   t3: A G I   t4: A E 0 0
//
// and host/du2 t0: A F. It returns the store and the snapshots' names.
func duStore(t *testing.T) (string, []string) {
	t.Helper()
	st := filepath.Join(e2e.TmpfsDir(t, "cairn-e2e-du-"), "store")
	e2e.MustCairn(t, "--store", st, "init", "-q")
	const cs = 64 << 10
	block := func(name string) []byte {
		if name == "0" {
			return make([]byte, cs)
		}
		return e2e.RandBytes(cs, uint64(name[0]))
	}
	at := time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Second)
	var names []string
	backup := func(id string, i int, blocks ...string) {
		var data []byte
		for _, b := range blocks {
			data = append(data, block(b)...)
		}
		img := filepath.Join(t.TempDir(), "img")
		if err := os.WriteFile(img, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tm := at.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
		e2e.MustCairn(t, "--store", st, "backup", "-q", "--no-sync", "--type", "host", "--id", id, "--time", tm,
			"--chunk-size", "64K", "disk.img:"+img)
		names = append(names, "host/"+id+"/"+tm)
	}
	backup("du", 0, "A", "B", "C")
	backup("du", 1, "A", "B", "D")
	backup("du", 2, "A", "G", "H")
	backup("du", 3, "A", "G", "I")
	backup("du", 4, "A", "E", "0", "0")
	backup("du2", 0, "A", "F")
	return st, names
}

// gcRemoved runs a full collection and returns the bytes it removed.
func gcRemoved(t *testing.T, st string) int64 {
	t.Helper()
	var rep struct {
		RemovedChunks int64 `json:"removed_chunks"`
		RemovedBytes  int64 `json:"removed_bytes"`
	}
	out := e2e.MustCairn(t, "--store", st, "gc", "--atime-cutoff", "0", "--json", "-q")
	if err := json.Unmarshal([]byte(out.Stdout), &rep); err != nil {
		t.Fatalf("gc --json: %v\n%s", err, out.Stdout)
	}
	return rep.RemovedBytes
}

// TestDuFreedMatchesGC: the unique bytes du reports for a snapshot are
// what gc removes once it is forgotten, and what prune --dry-run says a
// plan frees (chunks shared only among the removed snapshots included)
// is what the real prune and gc remove.
func TestDuFreedMatchesGC(t *testing.T) {
	t.Parallel()
	st, names := duStore(t)
	if n := gcRemoved(t, st); n != 0 {
		t.Fatalf("a fresh store's gc removed %d bytes", n)
	}
	var du duJSON
	out := e2e.MustCairn(t, "--store", st, "du", "--json", names[1])
	if err := json.Unmarshal([]byte(out.Stdout), &du); err != nil {
		t.Fatal(err)
	}
	if len(du.Snapshots) != 1 || du.Snapshots[0].Snapshot != names[1] || !du.StoredKnown || len(du.Errors) > 0 {
		t.Fatalf("du %s: %s", names[1], out.Stdout)
	}
	unique := du.Snapshots[0].Unique
	if unique.Chunks != 1 || unique.Stored < 64<<10 || du.Snapshots[0].Freed <= unique.Stored {
		t.Fatalf("du %s: unique %+v, freed %d: want one chunk (D) and its files", names[1], unique, du.Snapshots[0].Freed)
	}
	e2e.MustCairn(t, "--store", st, "forget", names[1])
	if got := gcRemoved(t, st); got != unique.Stored {
		t.Errorf("du said forgetting %s frees %d bytes of chunks; gc removed %d", names[1], unique.Stored, got)
	}

	// keep-last 1 removes t0, t2, t3: B C (B no longer shared), G (shared
	// by t2 and t3 only), H, I; A stays (t4, du2)
	text := e2e.MustCairn(t, "--store", st, "prune", "host/du", "--keep-last", "1", "--dry-run").Stdout
	if !strings.Contains(text, "would free ") || !strings.Contains(text, "(stored;") {
		t.Errorf("prune --dry-run says nothing of what it frees:\n%s", text)
	}
	var dry struct {
		Result struct {
			WouldFree struct {
				Snapshots int   `json:"snapshots"`
				Chunks    int64 `json:"chunks"`
				Stored    int64 `json:"stored"`
			} `json:"would_free"`
		} `json:"result"`
	}
	out = e2e.MustCairn(t, "--store", st, "prune", "host/du", "--keep-last", "1", "--dry-run", "--json")
	if err := json.Unmarshal([]byte(out.Stdout), &dry); err != nil {
		t.Fatal(err)
	}
	wf := dry.Result.WouldFree
	if wf.Snapshots != 3 || wf.Chunks != 5 {
		t.Fatalf("prune --dry-run would free %+v, want 3 snapshots, 5 chunks:\n%s", wf, out.Stdout)
	}
	e2e.MustCairn(t, "--store", st, "prune", "host/du", "--keep-last", "1")
	if got := gcRemoved(t, st); got != wf.Stored {
		t.Errorf("prune --dry-run said %d bytes of chunks; gc after the prune removed %d", wf.Stored, got)
	}
}

// TestDuHostileIndex: a truncated index is named, the others are
// reported, and the exit code is 3.
func TestDuHostileIndex(t *testing.T) {
	t.Parallel()
	st, names := duStore(t)
	path := filepath.Join(st, filepath.FromSlash(names[2]), "disk.img.fidx")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2e.Cairn(t, nil, "--store", st, "du")
	if r.Code != 3 || !strings.Contains(r.Stdout, names[2]+"/disk.img.fidx") || !strings.Contains(r.Stdout, names[3]) {
		t.Errorf("du with a truncated index: exit %d, want 3 naming %s\nstdout:\n%s\nstderr:\n%s", r.Code, path, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stderr, "panic") {
		t.Errorf("du panicked:\n%s", r.Stderr)
	}
}
