package gc

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/storetest"
)

// A forgotten snapshot's own chunks go; chunks another snapshot shares
// stay, whatever their age.
func TestRunRemovesUnreferenced(t *testing.T) {
	s := storetest.NewStore(t)
	base := storetest.RandBytes("base", 16*testChunk)
	a := backup(t, s, vm, 0, base)
	changed := append([]byte(nil), base...)
	copy(changed[3*testChunk:], storetest.RandBytes("new", 4*testChunk))
	b := backup(t, s, vm, 1, changed)
	keep := digests(t, s, b)
	onlyA := digests(t, s, a)
	for d := range keep {
		delete(onlyA, d)
	}
	if len(onlyA) != 4 {
		t.Fatalf("test data: %d chunks only in the first snapshot, want 4", len(onlyA))
	}
	garbage := int64(countChunks(t, s) - len(keep)) // with the unreferenced zero chunk
	if err := s.ForgetSnapshot(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	ageChunks(t, s, 72*time.Hour, false)

	rep := run(t, s, DefaultAtimeCutoff)
	if rep.RemovedChunks != garbage || rep.DiskChunks != int64(len(keep)) {
		t.Errorf("removed %d kept %d, want %d and %d", rep.RemovedChunks, rep.DiskChunks, garbage, len(keep))
	}
	checkChunks(t, s, keep)
	for d := range onlyA {
		if s.HasChunk(d) {
			t.Errorf("unreferenced chunk %s stayed", d)
		}
	}
	if rep.IndexFileCount != 1 || rep.ChunkRefs != 16 || rep.IndexDataBytes != int64(len(changed)) {
		t.Errorf("phase 1 counted %d indexes, %d refs, %d bytes", rep.IndexFileCount, rep.ChunkRefs, rep.IndexDataBytes)
	}
	if rep.DedupFactor <= 0 || rep.Phase1Start.IsZero() || rep.Cutoff.After(rep.Phase1Start.Add(-DefaultAtimeCutoff)) {
		t.Errorf("report: %+v", rep)
	}
	back, ok, err := ReadStatus(s)
	if err != nil || !ok || back.RemovedChunks != garbage || back.State != StateOK {
		t.Errorf("saved status %+v ok=%v err=%v", back, ok, err)
	}
	// a second GC finds nothing more to do
	if rep := run(t, s, 0); rep.RemovedChunks != 0 || rep.DiskChunks != int64(len(keep)) {
		t.Errorf("second GC removed %d kept %d", rep.RemovedChunks, rep.DiskChunks)
	}
}

// Unreferenced chunks newer than the cutoff are pending, not removed;
// with cutoff 0 they go.
func TestRunCutoff(t *testing.T) {
	s := storetest.NewStore(t)
	a := backup(t, s, vm, 0, storetest.RandBytes("a", 5*testChunk))
	n := int64(countChunks(t, s))
	if err := s.ForgetSnapshot(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	ageChunks(t, s, time.Hour, false)
	rep := run(t, s, DefaultAtimeCutoff)
	if rep.RemovedChunks != 0 || rep.PendingChunks != n || rep.PendingBytes == 0 {
		t.Errorf("default cutoff: removed %d pending %d (%d bytes)", rep.RemovedChunks, rep.PendingChunks, rep.PendingBytes)
	}
	rep = run(t, s, 0)
	if rep.RemovedChunks != n || rep.PendingChunks != 0 || countChunks(t, s) != 0 {
		t.Errorf("cutoff 0: removed %d pending %d", rep.RemovedChunks, rep.PendingChunks)
	}
}

// A store whose file system ignores atime updates is refused before
// anything is touched, and the report says why.
func TestRunAtimeCheckFails(t *testing.T) {
	s := storetest.NewStore(t)
	a := backup(t, s, vm, 0, storetest.RandBytes("a", 2*testChunk))
	s.ForgetSnapshot(context.Background(), a)
	ageChunks(t, s, 72*time.Hour, false)
	rep, err := Run(context.Background(), s, Options{checkAtime: func() (time.Time, error) {
		return time.Time{}, ErrAtimeUnsupported
	}})
	if !errors.Is(err, ErrAtimeUnsupported) || rep.State != StateFailed || rep.RemovedChunks != 0 {
		t.Fatalf("err %v, report %+v", err, rep)
	}
	if back, ok, _ := ReadStatus(s); !ok || back.State != StateFailed || back.Error == "" {
		t.Errorf("saved status %+v", back)
	}
}
