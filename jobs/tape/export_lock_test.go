package tape

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
)

// hookSource runs hook once, at the first chunk load.
type hookSource struct {
	*StoreSource
	once sync.Once
	hook func()
}

func (h *hookSource) LoadChunk(ctx context.Context, d chunk.Digest) ([]byte, error) {
	h.once.Do(h.hook)
	return h.StoreSource.LoadChunk(ctx, d)
}

func (h *hookSource) LoadChunkInto(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error) {
	h.once.Do(h.hook)
	return h.StoreSource.LoadChunkInto(ctx, d, buf)
}

// TestExportHoldsSnapshots: while the export reads snapshot a, forget of
// a is refused (ErrLocked); b, not reached yet, can be forgotten and is
// reported gone, not failed; c, which shares chunks that were planned for
// b, is still exported whole; once the export ended a can be forgotten.
func TestExportHoldsSnapshots(t *testing.T) {
	f := newFixture(t)
	snap := func(name string) store.Snapshot {
		s, err := ParseSnapshot(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var errA, errB error
	src := &hookSource{StoreSource: f.src, hook: func() {
		errA = f.s.ForgetSnapshot(bg, snap(f.a))
		errB = f.s.ForgetSnapshot(bg, snap(f.b))
	}}
	d := openDrive(t, t.TempDir())
	rep, err := Export(bg, d, src, []string{f.a, f.b, f.c}, exportOpts(2))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(errA, store.ErrLocked) || errB != nil {
		t.Fatalf("forget during the export of a: a %v (want ErrLocked), b %v (want nil)", errA, errB)
	}
	want := map[string]string{f.a: StateDone, f.b: StateGone, f.c: StateDone}
	for _, r := range rep.Snapshots {
		if want[r.Snapshot] != r.State {
			t.Errorf("%s: state %s (%s), want %s", r.Snapshot, r.State, r.Error, want[r.Snapshot])
		}
	}
	if len(rep.Snapshots) != 3 || rep.Failed() != 0 {
		t.Errorf("report %+v", rep.Snapshots)
	}
	target := newStore(t)
	sink, _ := NewStoreSink(bg, target)
	rr, err := Restore(bg, d, sink, RestoreOptions{Pool: "pool", Logger: quiet})
	sink.Close()
	if err != nil || rr.Failed() != 0 || len(rr.Snapshots) != 2 {
		t.Fatalf("restore: %+v %v", rr, err)
	}
	for _, s := range []string{f.a, f.c} {
		sameSnapshot(t, f.s, target, s)
	}
	if err := f.s.ForgetSnapshot(bg, snap(f.a)); err != nil {
		t.Errorf("forget after the export: %v", err)
	}
}
