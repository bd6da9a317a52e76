package verify

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// blockingVerify is verify whose chunk reads block until the job is
// cancelled; started is closed at the first read.
type blockingVerify struct {
	started chan struct{}
	once    *sync.Once
}

func newBlockingVerify() blockingVerify {
	return blockingVerify{started: make(chan struct{}), once: new(sync.Once)}
}

func (blockingVerify) Name() string { return "verify" }

func (k blockingVerify) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	opt, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	v := newVerifier(s, opt, "testdata/no-sysfs")
	v.read = func(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error) {
		k.once.Do(func() { close(k.started) })
		<-ctx.Done()
		return buf[:0], ctx.Err()
	}
	return v, nil
}

func TestVerifyCancel(t *testing.T) {
	s := testStore(t)
	snap := backupImage(t, s, store.Group{NS: "cancel", Type: store.TypeVM, ID: "1"}, t0, randBytes("cancel", 8*testChunk))
	k := newBlockingVerify()
	m := newTestManager(t, s, k)
	j, err := m.Start("verify", map[string]string{"ns": "cancel", "read-threads": "2"})
	if err != nil {
		t.Fatal(err)
	}
	<-k.started
	if st := j.Status(); st.State != jobs.StateRunning || st.Progress.ItemsTotal != 8 {
		t.Fatalf("while blocked: %+v", st)
	}
	if err := m.Cancel("verify"); err != nil {
		t.Fatal(err)
	}
	st, err := m.Wait(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != jobs.StateCancelled || st.Progress.ItemsDone != 0 {
		t.Fatalf("after cancel: %+v", st)
	}
	rep := st.Result.(Report)
	if rep.SnapshotsOK+rep.SnapshotsFailed != 0 || rep.ChunksCorrupt != 0 || !strings.Contains(strings.Join(rep.Next, " "), "cancelled") {
		t.Errorf("report after cancel: %+v", rep)
	}
	// Nothing half-written: no verify state, every chunk in place.
	if vs, ok := verifyState(t, s, snap); ok {
		t.Errorf("cancelled verify wrote %+v", vs)
	}
	for _, d := range chunksOf(t, s, snap, "disk.img.fidx") {
		if !exists(s.ChunkPath(d)) || exists(s.ChunkPath(d)+".0.bad") {
			t.Errorf("chunk %s moved", d)
		}
	}
	if err := m.Cancel("verify"); !errors.Is(err, jobs.ErrNotRunning) {
		t.Errorf("second cancel: %v", err)
	}
	// The job's store lock is free again.
	st, rep, _ = runVerify(t, s, map[string]string{"ns": "cancel"})
	if st.State != jobs.StateOK || rep.SnapshotsOK != 1 {
		t.Errorf("verify after cancel: %s %+v", st.State, rep)
	}
}

func TestManagerOneJobPerKind(t *testing.T) {
	s := testStore(t)
	backupImage(t, s, store.Group{NS: "manager", Type: store.TypeVM, ID: "1"}, t0, randBytes("manager", 2*testChunk))
	k := newBlockingVerify()
	m := newTestManager(t, s, k)
	if _, err := m.Start("gc", nil); !errors.Is(err, jobs.ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
	if st, _ := m.Status("verify"); st.State != jobs.StateIdle {
		t.Errorf("before any job: %+v", st)
	}
	j, err := m.Control("verify", "start ns=manager")
	if err != nil {
		t.Fatal(err)
	}
	<-k.started
	if _, err := m.Start("verify", map[string]string{"ns": "manager"}); !errors.Is(err, jobs.ErrRunning) {
		t.Errorf("second start: %v", err)
	}
	// Another manager on the same store stands for another process.
	other := newTestManager(t, s)
	if _, err := other.Start("verify", nil); !errors.Is(err, jobs.ErrRunning) || !strings.Contains(err.Error(), "another process") {
		t.Errorf("start from another manager: %v", err)
	}
	for _, tc := range []struct{ line, want string }{
		{"stop", `unknown word "stop"`},
		{"start read-threads=99", "from 1 to 32"},
		{"start colour=blue", `no parameter "colour"`},
		{"start", "already running"},
	} {
		if _, err := m.Control("verify", tc.line); err == nil {
			t.Errorf("%q accepted", tc.line)
		}
		st, _ := m.Status("verify")
		if !strings.Contains(st.LastCommandError, tc.want) || st.ID != j.ID() {
			t.Errorf("%q: status says %q (job %s)", tc.line, st.LastCommandError, st.ID)
		}
	}
	if _, err := m.Control("verify", "cancel"); err != nil {
		t.Fatal(err)
	}
	if st, _ := m.Status("verify"); st.LastCommandError != "" {
		t.Errorf("accepted command left %q", st.LastCommandError)
	}
	m.Wait(t.Context(), j)
	list := m.List()
	if len(list) != 1 || list[0].Kind != "verify" || list[0].State != jobs.StateCancelled {
		t.Errorf("list: %+v", list)
	}
	if _, err := json.Marshal(list); err != nil {
		t.Errorf("status does not marshal: %v", err)
	}
	if j2, err := other.Start("verify", map[string]string{"ns": "manager"}); err != nil {
		t.Errorf("start after the first ended: %v", err)
	} else {
		other.Wait(t.Context(), j2)
	}
}
