package verify

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// pausedVerify is verify whose first chunk read waits for release: the
// job then holds the snapshot it verifies.
type pausedVerify struct {
	reading chan struct{} // closed at the first read
	release chan struct{}
	once    *sync.Once
}

func (pausedVerify) Name() string { return "verify" }

func (k pausedVerify) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	opt, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	v := newVerifier(s, opt, "testdata/no-sysfs")
	v.read = func(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error) {
		k.once.Do(func() { close(k.reading) })
		<-k.release
		b, err := s.ReadChunk(ctx, d, store.ChunkOptions{Buf: buf, Direct: store.DirectNever})
		return b.Bytes(), err
	}
	return v, nil
}

// TestVerifyHoldsSnapshot: forget of the snapshot a verify is reading is
// refused (ErrLocked) and succeeds once the verify ends; a snapshot of
// the selection removed before the verify reached it is reported gone,
// not failed.
func TestVerifyHoldsSnapshot(t *testing.T) {
	s := testStore(t)
	g := store.Group{NS: "holds", Type: store.TypeVM, ID: "1"}
	older := backupImage(t, s, g, t0, randBytes("holds-1", 3*testChunk))
	newer := backupImage(t, s, g, t0.Add(1e12), randBytes("holds-2", 3*testChunk))
	k := pausedVerify{reading: make(chan struct{}), release: make(chan struct{}), once: new(sync.Once)}
	m := newTestManager(t, s, k)
	j, err := m.Start("verify", map[string]string{"ns": "holds", "read-threads": "1"})
	if err != nil {
		t.Fatal(err)
	}
	<-k.reading // verifying the newer snapshot (newest first)
	err = s.ForgetSnapshot(t.Context(), newer)
	if !errors.Is(err, store.ErrLocked) {
		close(k.release)
		t.Fatalf("forget of the snapshot being verified: %v, want ErrLocked", err)
	}
	if err := s.ForgetSnapshot(t.Context(), older); err != nil { // not read yet: not held
		close(k.release)
		t.Fatalf("forget of a snapshot the verify has not reached: %v", err)
	}
	close(k.release)
	st, err := m.Wait(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	rep := st.Result.(Report)
	if st.State != jobs.StateOK || rep.SnapshotsOK != 1 || rep.SnapshotsFailed != 0 {
		t.Errorf("verify: state %s, %d ok, %d failed; want ok, 1, 0 (errors %q)", st.State, rep.SnapshotsOK, rep.SnapshotsFailed, st.Errors)
	}
	if log := strings.Join(j.Log(), "\n"); !strings.Contains(log, older.String()+": removed before it was verified") {
		t.Errorf("the removed snapshot is not reported gone:\n%s", log)
	}
	if err := s.ForgetSnapshot(t.Context(), newer); err != nil {
		t.Errorf("forget after the verify ended: %v", err)
	}
}
