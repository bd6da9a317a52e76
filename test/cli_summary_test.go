package test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/test/e2e"
)

type summaryJSON struct {
	Snapshot      string  `json:"snapshot"`
	Bytes         int64   `json:"bytes"`
	ReadBytes     int64   `json:"read_bytes"`
	NewBytes      int64   `json:"new_bytes"`
	NewStored     int64   `json:"new_stored_bytes"`
	DedupBytes    int64   `json:"dedup_bytes"`
	DedupRatio    float64 `json:"dedup_ratio"`
	CompressRatio float64 `json:"compress_ratio"`
	Chunks        int64   `json:"chunks"`
	NewChunks     int64   `json:"new_chunks"`
}

type groupJSON struct {
	Group         string `json:"group"`
	Snapshots     int    `json:"snapshots"`
	Newest        string `json:"newest"`
	Size          uint64 `json:"size"`
	StoredSize    int64  `json:"stored_size"`
	StoredUnknown int    `json:"stored_unknown"`
}

// testBackupSummary: the summary separates read, new, stored and
// deduplicated bytes; the manifest records chunk_upload_stats; snapshots
// sums them per group and shows verify states, protection and notes.
func testBackupSummary(t *testing.T, st string) {
	ns, seed := e2e.UniqueNS("summary")
	img := filepath.Join(t.TempDir(), "d.img")
	// compressible half, random half: 1 MiB in four 256 KiB chunks
	data := append(make([]byte, 0, 1<<20), []byte(strings.Repeat("cairn summary ", 512*1024/14+1))[:512<<10]...)
	data = append(data, e2e.RandBytes(512<<10, seed)...)
	os.WriteFile(img, data, 0o644)
	backup := func(at string) summaryJSON {
		r := e2e.MustCairn(t, "--store", st, "backup", "--ns", ns, "--type", "vm", "--id", "1", "--time", at,
			"--chunk-size", "256K", "--no-sync", "--json", "disk.img:"+img)
		var s summaryJSON
		e2e.DecodeJSON(t, r, &s)
		return s
	}
	first := backup("2024-05-01T10:00:00Z")
	if first.ReadBytes != 1<<20 || first.NewBytes != 1<<20 || first.DedupBytes != 0 || first.NewStored >= first.NewBytes ||
		first.CompressRatio <= 1 || first.DedupRatio != 1 {
		t.Fatalf("first backup: %+v", first)
	}
	second := backup("2024-05-02T10:00:00Z")
	if second.ReadBytes != 1<<20 || second.NewBytes != 0 || second.NewStored != 0 || second.DedupBytes != 1<<20 || second.DedupRatio != 0 {
		t.Fatalf("second backup (nothing new): %+v", second)
	}
	text := e2e.MustCairn(t, "--store", st, "backup", "--ns", ns, "--type", "vm", "--id", "1", "--time", "2024-05-03T10:00:00Z",
		"--chunk-size", "256K", "--no-sync", "disk.img:"+img).Stdout
	for _, want := range []string{"read      1.0 MiB", "0 B new in 0, 1.0 MiB already stored", "dedup     - (nothing new)", "compress  - (nothing new)"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}

	// The manifests record what each backup added.
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snaps := listGroup(t, s, ns)
	if len(snaps) != 3 {
		t.Fatalf("snapshots %v", snaps)
	}
	m, err := s.ReadManifest(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	cs, ok := m.ChunkUploadStats()
	if !ok || cs.Count != 4 || cs.Size != 1<<20 || cs.CompressedSize != first.NewStored || cs.Duplicates != 0 {
		t.Fatalf("chunk_upload_stats of the first: %+v %v", cs, ok)
	}
	groups := func() groupJSON {
		var gs []groupJSON
		e2e.DecodeJSON(t, e2e.MustCairn(t, "--store", st, "snapshots", "--ns", ns, "--groups", "--json"), &gs)
		if len(gs) != 1 {
			t.Fatalf("groups %+v", gs)
		}
		return gs[0]
	}
	g := groups()
	if g.Group != "ns/"+ns+"/vm/1" || g.Snapshots != 3 || g.Newest != "2024-05-03T10:00:00Z" || g.Size != 3<<20 ||
		g.StoredSize != first.NewStored || g.StoredUnknown != 0 {
		t.Fatalf("group %+v (first stored %d)", g, first.NewStored)
	}

	// Verify one, protect one, give one notes (as PBS does, in the
	// manifest), and take the upload stats off one (an older backup).
	e2e.MustCairn(t, "--store", st, "verify", "--ns", ns, "vm/1/2024-05-02T10:00:00Z")
	e2e.MustCairn(t, "--store", st, "protect", "ns/"+ns+"/vm/1/2024-05-03T10:00:00Z")
	err = s.UpdateManifest(context.Background(), snaps[0], func(m *store.Manifest) error {
		m.Unprotected["notes"] = json.RawMessage(`"weekly full\nsecond line"`)
		delete(m.Unprotected, "chunk_upload_stats")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := e2e.MustCairn(t, "--store", st, "snapshots", "--ns", ns).Stdout
	for _, want := range []string{"group ns/" + ns + "/vm/1: 3 snapshot(s), newest 2024-05-03T10:00:00Z, 3.0 MiB logical, 0 B + unknown"} {
		if !strings.Contains(out, want) {
			t.Errorf("snapshots lacks %q:\n%s", want, out)
		}
	}
	for snap, want := range map[string]string{"2024-05-01T10:00:00Z": ` -\s+-\s+not verified\s+weekly full …$`,
		"2024-05-02T10:00:00Z": ` -\s+-\s+verify ok\s+-$`, "2024-05-03T10:00:00Z": ` yes\s+-\s+not verified\s+-$`} {
		if !regexp.MustCompile(`(?m)^  ns/` + ns + `/vm/1/` + snap + ` .*` + want).MatchString(out) {
			t.Errorf("snapshot %s: want %q:\n%s", snap, want, out)
		}
	}
	if g := groups(); g.StoredSize != 0 || g.StoredUnknown != 1 {
		t.Errorf("group after the stats were taken off: %+v", g)
	}
	var rows []struct {
		Snapshot, Verified, Notes string
		Protected                 bool
		StoredSize                *int64 `json:"stored_size"`
	}
	e2e.DecodeJSON(t, e2e.MustCairn(t, "--store", st, "snapshots", "--ns", ns, "--json"), &rows)
	if len(rows) != 3 || rows[0].Notes != "weekly full …" || rows[0].StoredSize != nil || rows[1].Verified != "ok" ||
		rows[2].Verified != "not verified" || !rows[2].Protected || rows[1].StoredSize == nil || *rows[1].StoredSize != 0 {
		t.Errorf("snapshots --json: %+v", rows)
	}
}

func listGroup(t *testing.T, s *store.Store, ns string) []store.Snapshot {
	t.Helper()
	infos, err := s.Snapshots(store.Group{NS: store.NS(ns), Type: "vm", ID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Snapshot
	for _, si := range infos {
		out = append(out, si.Snapshot)
	}
	return out
}
