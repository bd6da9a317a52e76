package tape

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/cairnfs/cairn/store"
)

func TestParseTapeExportParams(t *testing.T) {
	dir := "/var/tape"
	tests := []struct {
		name    string
		params  map[string]string
		wantErr string
	}{
		{"minimal", map[string]string{"drive": dir, "pool": "p"}, ""},
		{"all", map[string]string{"drive": dir, "pool": "p", "worker-threads": "8", "tape-size": "2G", "new-set": "true",
			"auto-create": "false", "ns": "prod", "snapshots": "vm/1/latest,ns/x/vm/2/2024-05-01T12:00:00Z", "chunk-order": "inode"}, ""},
		{"no drive", map[string]string{"pool": "p"}, `drive=""`},
		{"relative drive", map[string]string{"drive": "tapes", "pool": "p"}, `drive="tapes"`},
		{"no pool", map[string]string{"drive": dir}, `pool=""`},
		{"bad pool", map[string]string{"drive": dir, "pool": "a/b"}, `pool="a/b"`},
		{"threads 0", map[string]string{"drive": dir, "pool": "p", "worker-threads": "0"}, "worker-threads"},
		{"threads 33", map[string]string{"drive": dir, "pool": "p", "worker-threads": "33"}, "worker-threads"},
		{"small tape", map[string]string{"drive": dir, "pool": "p", "tape-size": "512k"}, "tape-size"},
		{"bad size", map[string]string{"drive": dir, "pool": "p", "tape-size": "big"}, "tape-size"},
		{"bad order", map[string]string{"drive": dir, "pool": "p", "chunk-order": "random"}, "chunk-order"},
		{"bad ref", map[string]string{"drive": dir, "pool": "p", "snapshots": "vm"}, "snapshots"},
		{"groups", map[string]string{"drive": dir, "pool": "p", "ns": "prod", "groups": "vm/1,ns/x/ct/2", "latest-only": "true"}, ""},
		{"group with a time", map[string]string{"drive": dir, "pool": "p", "groups": "vm/1/2024-05-01T12:00:00Z"}, "groups"},
		{"group latest", map[string]string{"drive": dir, "pool": "p", "groups": "vm/1/latest"}, "groups"},
		{"bad group", map[string]string{"drive": dir, "pool": "p", "groups": "vm"}, "groups"},
		{"bad latest-only", map[string]string{"drive": dir, "pool": "p", "latest-only": "maybe"}, "latest-only"},
		{"unknown", map[string]string{"drive": dir, "pool": "p", "read-threads": "2"}, `"read-threads"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseExportParams(tc.params)
			if tc.wantErr != "" {
				if !errors.Is(err, jobs.ErrBadParam) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want ErrBadParam naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseExportParams(o.Params())
			if err != nil {
				t.Fatalf("round trip of %v: %v", o.Params(), err)
			}
			if !maps.Equal(back.Params(), o.Params()) {
				t.Fatalf("round trip: %v != %v", back.Params(), o.Params())
			}
		})
	}
	g, _ := ParseExportParams(map[string]string{"drive": dir, "pool": "p", "ns": "prod", "groups": "vm/1,ns/x/ct/2", "latest-only": "1"})
	if len(g.Groups) != 2 || g.Groups[0].String() != "ns/prod/vm/1" || g.Groups[1].String() != "ns/x/ct/2" || !g.LatestOnly {
		t.Fatalf("groups %+v", g)
	}
	o, _ := ParseExportParams(map[string]string{"drive": dir, "pool": "p", "tape-size": "2G", "ns": "prod", "snapshots": "vm/1/latest"})
	if o.TapeSize != 2<<30 || o.WorkerThreads != 1 || !o.AutoCreate || o.ChunkOrder != jobs.OrderAuto || o.Refs[0].NS != "prod" {
		t.Fatalf("parsed %+v", o)
	}
}

func TestParseTapeRestoreParams(t *testing.T) {
	const set = "0c6ee6a4-8bb4-4a0b-a0c8-0b5e7d4c2f11"
	o, err := ParseRestoreParams(map[string]string{"drive": "/d", "media-set": set,
		"snapshots": "vm/1/2024-05-01T12:00:00Z,ns/a/ct/2/2024-05-01T12:00:00Z", "worker-threads": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if o.MediaSet.String() != set || len(o.Snapshots) != 2 || o.Snapshots[1] != "ns/a/ct/2/2024-05-01T12:00:00Z" {
		t.Fatalf("parsed %+v", o)
	}
	if back, err := ParseRestoreParams(o.Params()); err != nil || !maps.Equal(back.Params(), o.Params()) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	for _, bad := range []map[string]string{
		{"drive": "/d", "media-set": "nope"},
		{"drive": "/d", "snapshots": "vm/1/latest"},
		{"drive": "rel"},
		{"drive": "/d", "worker-threads": "99"},
	} {
		if _, err := ParseRestoreParams(bad); !errors.Is(err, jobs.ErrBadParam) {
			t.Errorf("%v: err = %v", bad, err)
		}
	}
}

// newTestManager returns a manager of jobs on s running kinds.
func newTestManager(t *testing.T, s *store.Store, kinds ...jobs.Kind) *jobs.Manager {
	t.Helper()
	m := jobs.NewManager(context.Background(), s, nil)
	for _, k := range kinds {
		if err := m.Register(k); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(m.Close)
	return m
}

// runJob starts a job of kind and waits for its end.
func runJob(t *testing.T, m *jobs.Manager, kind string, params map[string]string) jobs.Status {
	t.Helper()
	j, err := m.Start(kind, params)
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Wait(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestTapeExportRestoreJobs(t *testing.T) {
	s := newStore(t)
	ns := store.NS("tapejob")
	a := randBytes("tape-a", 12*testChunk)
	b := append(append([]byte(nil), a[:6*testChunk]...), randBytes("tape-b", 10*testChunk)...)
	snapA := backup(t, s, string(ns), "1", t0, a)
	snapB := backup(t, s, string(ns), "1", t0.Add(time.Hour), b)
	dir := t.TempDir()
	m := newTestManager(t, s, ExportKind{Sysfs: t.TempDir()}, RestoreKind{})
	params := map[string]string{"drive": dir, "pool": "p", "ns": string(ns), "tape-size": "2M", "worker-threads": "3"}

	st := runJob(t, m, "tape-export", params)
	rep, ok := st.Result.(ExportJobReport)
	if st.State != jobs.StateOK || !ok || rep.ExportReport == nil {
		t.Fatalf("export: %+v", st)
	}
	if rep.SnapshotsOK != 2 || rep.Chunks != 22 || len(rep.Tapes) < 2 || rep.ChunkOrder != jobs.OrderIndex {
		t.Fatalf("export report: %+v", rep)
	}
	if p := st.Progress; p.ItemsDone != 22 || p.BytesTotal == 0 || p.BytesDone != p.BytesTotal || p.BytesDone != rep.Bytes {
		t.Fatalf("export progress: %+v (report bytes %d)", p, rep.Bytes)
	}
	if rep.Snapshots[0].Snapshot != snapA || rep.Snapshots[1].Snapshot != snapB {
		t.Fatalf("export order (want oldest first): %+v", rep.Snapshots)
	}

	// Again: nothing new to write.
	st = runJob(t, m, "tape-export", params)
	rep = st.Result.(ExportJobReport)
	if st.State != jobs.StateOK || rep.SnapshotsPresent != 2 || rep.Chunks != 0 {
		t.Fatalf("second export: %+v", rep)
	}

	// Restore into an empty store, then verify there.
	dst, err := store.CreateWith(filepath.Join(t.TempDir(), "dst"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	rm := newTestManager(t, dst, RestoreKind{})
	st = runJob(t, rm, "tape-restore", map[string]string{"drive": dir, "snapshots": snapB})
	rrep := st.Result.(RestoreJobReport)
	if st.State != jobs.StateOK || rrep.SnapshotsOK != 1 || rrep.Chunks != 16 {
		t.Fatalf("selective restore: %+v %+v", st, rrep)
	}
	st = runJob(t, rm, "tape-restore", map[string]string{"drive": dir, "pool": "p"})
	rrep = st.Result.(RestoreJobReport)
	if st.State != jobs.StateOK || rrep.SnapshotsOK != 1 || rrep.SnapshotsPresent != 1 || rrep.Chunks != 6 || rrep.ChunksPresent != 6 {
		t.Fatalf("full restore: %+v %+v", rrep, rrep.RestoreReport)
	}
	vst := runJob(t, newTestManager(t, dst, verify.Kind{Sysfs: t.TempDir()}), "verify", nil)
	vrep := vst.Result.(verify.Report)
	if vst.State != jobs.StateOK || vrep.SnapshotsOK != 2 || vrep.Chunks != 22 {
		t.Fatalf("verify of restored store: %+v", vrep)
	}
}

func TestTapeExportBadDrive(t *testing.T) {
	s := newStore(t)
	backup(t, s, "tapebad", "1", t0, randBytes("tapebad", 2*testChunk))
	m := newTestManager(t, s, ExportKind{Sysfs: t.TempDir()})
	missing := filepath.Join(t.TempDir(), "nodrive")
	st := runJob(t, m, "tape-export", map[string]string{"drive": missing, "pool": "p", "ns": "tapebad"})
	if st.State != jobs.StateFailed || !strings.Contains(strings.Join(st.Errors, "\n"), "no such tape drive directory") {
		t.Fatalf("missing drive: %+v", st)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("export created the missing drive directory")
	}

	dir := t.TempDir()
	d, err := drive.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	st = runJob(t, m, "tape-export", map[string]string{"drive": dir, "pool": "p", "ns": "tapebad"})
	d.Close()
	if st.State != jobs.StateFailed || !strings.Contains(strings.Join(st.Errors, "\n"), "in use by another process") {
		t.Fatalf("busy drive: %+v", st)
	}

	// A full pool: one 2 MiB tape, no auto-create, more data than fits.
	backup(t, s, "tapebad", "2", t0, randBytes("tapebig", 24*testChunk))
	st = runJob(t, m, "tape-export", map[string]string{"drive": dir, "pool": "p", "ns": "tapebad",
		"tape-size": "1M", "auto-create": "false"})
	if st.State != jobs.StateFailed || !strings.Contains(strings.Join(st.Errors, "\n"), "no writable tape") {
		t.Fatalf("no tape: %+v", st)
	}
	d, err = drive.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CreateTape("t1", 2<<20); err != nil {
		t.Fatal(err)
	}
	d.Close()
	st = runJob(t, m, "tape-export", map[string]string{"drive": dir, "pool": "p", "ns": "tapebad", "auto-create": "false"})
	rep := st.Result.(ExportJobReport)
	if st.State != jobs.StateFailed || rep.ExportReport == nil || !strings.Contains(strings.Join(st.Errors, "\n"), "full") {
		t.Fatalf("full pool: %+v %+v", st, rep)
	}
	if rep.Snapshots[0].State != StateDone {
		t.Fatalf("the snapshot that fits was not exported: %+v", rep.Snapshots)
	}
}
