package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

func TestVerifyConcurrentBackup(t *testing.T) {
	s := testStore(t)
	g := store.Group{NS: "concurrent", Type: store.TypeVM, ID: "100"}
	first := backupImage(t, s, g, t0, randBytes("concurrent 1", 8*testChunk))
	data := randBytes("concurrent 2", 16*testChunk)

	// A backup from a pipe: it stays unfinished while verify runs.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.StartBackup(t.Context(), g, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	added := make(chan error, 1)
	go func() {
		added <- b.AddImage(t.Context(), "disk.img", r, store.ImageOptions{ChunkSize: testChunk, Workers: 1})
		r.Close()
	}()
	if _, err := w.Write(data[:8*testChunk]); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() { // the rest goes in while verify runs
		_, err := w.Write(data[8*testChunk:])
		w.Close()
		wrote <- err
	}()
	st, rep, _ := runVerify(t, s, map[string]string{"ns": "concurrent", "verify-threads": "2"})
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if st.State != jobs.StateOK || rep.SnapshotsOK != 1 || rep.Snapshots[0].Snapshot != first.String() {
		t.Fatalf("verify during backup: %s %+v", st.State, rep)
	}
	// The backup is complete and both snapshots verify.
	st, rep, _ = runVerify(t, s, map[string]string{"ns": "concurrent"})
	if st.State != jobs.StateOK || rep.SnapshotsOK != 2 {
		t.Fatalf("verify after backup: %s %+v", st.State, rep)
	}
	if rep.Snapshots[0].Snapshot != b.Snapshot().String() {
		t.Errorf("newest snapshot not verified first: %+v", rep.Snapshots)
	}
}

func TestVerifyIgnoreVerified(t *testing.T) {
	s := testStore(t)
	g := store.Group{NS: "again", Type: store.TypeCT, ID: "7"}
	old := backupImage(t, s, g, t0, randBytes("again 1", 2*testChunk))
	backupImage(t, s, g, t0.Add(time.Hour), randBytes("again 2", 2*testChunk))
	run := func(params string) Report {
		t.Helper()
		p, _ := jobs.ParseParams(strings.Fields("ns=again " + params))
		st, rep, _ := runVerify(t, s, p)
		if st.State != jobs.StateOK {
			t.Fatalf("%s: %s %v", params, st.State, st.Errors)
		}
		return rep
	}
	check := func(params string, verified, skipped int) {
		t.Helper()
		rep := run(params)
		if rep.SnapshotsOK != verified || rep.SnapshotsSkipped != skipped {
			t.Errorf("%q: %d verified, %d skipped; want %d, %d", params, rep.SnapshotsOK, rep.SnapshotsSkipped, verified, skipped)
		}
	}
	check("", 2, 0)
	check("ignore-verified", 0, 2)
	check("ignore-verified=false", 2, 0)
	// The old snapshot was last verified ten days ago.
	u := jobs.UPID{Node: "localhost", PID: 1, TaskID: 1, Type: "verify", WorkerID: "store", User: "root@pam"}
	u.Start = time.Now().Add(-10 * 24 * time.Hour)
	err := s.UpdateManifest(t.Context(), old, func(m *store.Manifest) error {
		m.SetVerifyState(store.VerifyState{State: "ok", UPID: u.String()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("ignore-verified outdated-after=30", 0, 2)
	check("ignore-verified outdated-after=5", 1, 1)
	check("ignore-verified outdated-after=0", 2, 0)
	// A failed snapshot is verified again even with ignore-verified.
	s.UpdateManifest(t.Context(), old, func(m *store.Manifest) error {
		m.SetVerifyState(store.VerifyState{State: "failed", UPID: u.String()})
		return nil
	})
	check("ignore-verified", 1, 1)
}

func TestVerifyAutoOrder(t *testing.T) {
	s := testStore(t)
	backupImage(t, s, store.Group{NS: "auto", Type: store.TypeHost, ID: "x"}, t0, randBytes("auto", 3*testChunk))
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(s.Root(), ".chunks"), &st); err != nil {
		t.Fatal(err)
	}
	// A fake sysfs that names the store's device a rotational disk.
	sys := t.TempDir()
	disk := filepath.Join(sys, "block", "sdz")
	os.MkdirAll(filepath.Join(disk, "queue"), 0o755)
	os.WriteFile(filepath.Join(disk, "dev"), fmt.Appendf(nil, "%d:%d\n", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))), 0o644)
	for _, tc := range []struct {
		sysfs, rotational, order, why string
	}{
		{sys, "1", jobs.OrderInode, "sdz rotational=1"},
		{sys, "0", jobs.OrderIndex, "sdz rotational=0"},
		{t.TempDir(), "", jobs.OrderIndex, "cannot tell"},
	} {
		if tc.rotational != "" {
			os.WriteFile(filepath.Join(disk, "queue", "rotational"), []byte(tc.rotational+"\n"), 0o644)
		}
		m := newTestManager(t, s, Kind{Sysfs: tc.sysfs})
		j, err := m.Start("verify", map[string]string{"ns": "auto"})
		if err != nil {
			t.Fatal(err)
		}
		res, _ := m.Wait(t.Context(), j)
		rep := res.Result.(Report)
		if res.State != jobs.StateOK || rep.ChunkOrder != tc.order || !strings.Contains(rep.ChunkOrderReason, tc.why) ||
			!strings.Contains(strings.Join(j.Log(), "\n"), tc.why) {
			t.Errorf("rotational %q: %s, order %s (%s)", tc.rotational, res.State, rep.ChunkOrder, rep.ChunkOrderReason)
		}
	}
}

// flakyVerify is verify whose first read of one chunk returns a damaged
// copy, as a flaky disk or cable would.
type flakyVerify struct {
	d     chunk.Digest
	reads *atomic.Int32
}

func (flakyVerify) Name() string { return "verify" }

func (k flakyVerify) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	opt, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	v := newVerifier(s, opt, "testdata/no-sysfs")
	v.read = func(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error) {
		blob, err := s.ReadChunk(ctx, d, store.ChunkOptions{Buf: buf, Direct: store.DirectNever})
		b := blob.Bytes()
		if d == k.d && k.reads.Add(1) == 1 && err == nil {
			b[len(b)-1] ^= 1
		}
		return b, err
	}
	return v, nil
}

func TestVerifyRereadsBeforeJudging(t *testing.T) {
	s := testStore(t)
	snap := backupImage(t, s, store.Group{NS: "flaky", Type: store.TypeVM, ID: "1"}, t0, randBytes("flaky", 4*testChunk))
	d := chunksOf(t, s, snap, "disk.img.fidx")[1]
	k := flakyVerify{d: d, reads: new(atomic.Int32)}
	m := newTestManager(t, s, k)
	j, err := m.Start("verify", map[string]string{"ns": "flaky"})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := m.Wait(t.Context(), j)
	rep := st.Result.(Report)
	if st.State != jobs.StateOK || rep.ChunksCorrupt != 0 || k.reads.Load() != 2 || !exists(s.ChunkPath(d)) {
		t.Fatalf("state %s, corrupt %d, reads %d", st.State, rep.ChunksCorrupt, k.reads.Load())
	}
	if !strings.Contains(strings.Join(j.Log(), "\n"), "second read ok") {
		t.Errorf("the failed first read is not logged:\n%s", strings.Join(j.Log(), "\n"))
	}
}
