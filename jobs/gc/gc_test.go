package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
	"golang.org/x/sys/unix"
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
		if storetest.HasChunk(t, s, d) {
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
	rep, err := Run(context.Background(), s, Options{collector: failingBegin{s.ChunkCollector()}})
	if !errors.Is(err, ErrAtimeUnsupported) || rep.State != StateFailed || rep.RemovedChunks != 0 {
		t.Fatalf("err %v, report %+v", err, rep)
	}
	if back, ok, _ := ReadStatus(s); !ok || back.State != StateFailed || back.Error == "" {
		t.Errorf("saved status %+v", back)
	}
}

// A chunk verify moved aside stays while an index references it and no
// good copy exists; it goes once a good copy is back, or once nothing
// references it.
func TestRunBadChunks(t *testing.T) {
	s := storetest.NewStore(t)
	a := backup(t, s, vm, 0, storetest.RandBytes("a", 3*testChunk))
	var bad chunk.Digest
	for d := range digests(t, s, a) {
		bad = d
	}
	blob, err := os.ReadFile(s.ChunkPath(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkBad(bad); err != nil {
		t.Fatal(err)
	}
	ageChunks(t, s, 72*time.Hour, false)
	rep := run(t, s, 0)
	if rep.MissingChunks != 1 || rep.StillBad != 1 || rep.RemovedBad != 0 {
		t.Errorf("referenced bad chunk: missing %d, still bad %d, removed bad %d", rep.MissingChunks, rep.StillBad, rep.RemovedBad)
	}
	if _, err := os.Stat(s.ChunkPath(bad) + ".0.bad"); err != nil {
		t.Fatalf("bad copy of a referenced chunk removed: %v", err)
	}
	// a good copy is back: the bad one goes
	if _, err := s.InsertChunk(bad, blob); err != nil {
		t.Fatal(err)
	}
	ageChunks(t, s, 72*time.Hour, false)
	rep = run(t, s, 0)
	if rep.MissingChunks != 0 || rep.RemovedBad != 1 || rep.StillBad != 0 {
		t.Errorf("good copy back: missing %d, removed bad %d, still bad %d", rep.MissingChunks, rep.RemovedBad, rep.StillBad)
	}
	// nothing references it any more: a new bad copy goes too
	if _, err := s.MarkBad(bad); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetSnapshot(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	ageChunks(t, s, 72*time.Hour, false)
	if rep = run(t, s, 0); rep.RemovedBad != 1 || rep.DiskChunks != 0 {
		t.Errorf("unreferenced: removed bad %d, kept %d", rep.RemovedBad, rep.DiskChunks)
	}
}

// Temporary files of dead writers go once older than the cutoff; a
// running writer's stay.
func TestRunTempFiles(t *testing.T) {
	s := storetest.NewStore(t)
	a := backup(t, s, vm, 0, storetest.RandBytes("a", 2*testChunk))
	var d chunk.Digest
	for d = range digests(t, s, a) {
	}
	dead := s.ChunkPath(d) + ".tmp_123456"
	if err := os.WriteFile(dead, []byte("half a chunk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if rep := run(t, s, DefaultAtimeCutoff); rep.RemovedTemp != 0 {
		t.Errorf("a fresh temporary file removed with the default cutoff")
	}
	w, err := s.RegisterWriter()
	if err != nil {
		t.Fatal(err)
	}
	live := s.ChunkPath(d) + ".tmp_654321"
	os.WriteFile(live, []byte("being written"), 0o600)
	rep := run(t, s, 0)
	if rep.OldestWriter == nil || !rep.Cutoff.Before(w.Start().Add(-WriterMargin+time.Second)) {
		t.Errorf("a running writer did not bound the cutoff: %+v", rep)
	}
	w.Done()
	time.Sleep(10 * time.Millisecond)
	rep = run(t, s, 0)
	if rep.RemovedTemp != 2 {
		t.Errorf("removed %d temporary files, want 2", rep.RemovedTemp)
	}
	checkChunks(t, s, digests(t, s, a))
}

// An index GC cannot read stops it before the sweep: nothing is removed.
func TestRunBadIndexRemovesNothing(t *testing.T) {
	s := storetest.NewStore(t)
	a := backup(t, s, vm, 0, storetest.RandBytes("a", 2*testChunk))
	b := backup(t, s, store.Group{Type: store.TypeCT, ID: "7"}, 0, storetest.RandBytes("b", 2*testChunk))
	if err := os.WriteFile(filepath.Join(s.SnapshotPath(b), "disk.img.fidx"), []byte("not an index"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.ForgetSnapshot(context.Background(), a)
	ageChunks(t, s, 72*time.Hour, false)
	before := countChunks(t, s)
	rep, err := Run(context.Background(), s, Options{})
	if !errors.Is(err, ErrBadIndex) || !strings.Contains(err.Error(), "disk.img.fidx") || rep.State != StateFailed {
		t.Fatalf("err %v state %s", err, rep.State)
	}
	if n := countChunks(t, s); n != before || rep.RemovedChunks != 0 {
		t.Errorf("%d of %d chunks left after a failed phase 1", n, before)
	}
}

// An unfinished snapshot's indexes are marked like a finished one's.
func TestRunUnfinishedSnapshot(t *testing.T) {
	s := storetest.NewStore(t)
	a := backup(t, s, vm, 0, storetest.RandBytes("a", 4*testChunk))
	if err := os.Remove(filepath.Join(s.SnapshotPath(a), store.ManifestName)); err != nil {
		t.Fatal(err)
	}
	ageChunks(t, s, 72*time.Hour, false)
	rep := run(t, s, 0)
	checkChunks(t, s, digests(t, s, a))
	if rep.IndexFileCount != 1 || rep.MissingChunks != 0 {
		t.Errorf("report %+v", rep)
	}
}

func TestRunCancelled(t *testing.T) {
	s := storetest.NewStore(t)
	backup(t, s, vm, 0, storetest.RandBytes("a", 2*testChunk))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, s, Options{})
	if !errors.Is(err, context.Canceled) || rep.State != StateCancelled {
		t.Errorf("err %v state %s", err, rep.State)
	}
}

// One GC per store: a second one is refused while the first holds the lock.
func TestRunOnePerStore(t *testing.T) {
	s := storetest.NewStore(t)
	l, err := s.LockJob(KindName)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if _, err := Run(context.Background(), s, Options{}); !errors.Is(err, store.ErrLocked) {
		t.Errorf("second GC: %v", err)
	}
	if _, ok, _ := ReadStatus(s); ok {
		t.Error("a refused GC saved a status")
	}
}

func TestReadStatusHostile(t *testing.T) {
	s := storetest.NewStore(t)
	if _, ok, err := ReadStatus(s); ok || err != nil {
		t.Errorf("no status: %v %v", ok, err)
	}
	os.WriteFile(s.GCStatusPath(), []byte("{not json"), 0o600)
	if _, _, err := ReadStatus(s); err == nil || !strings.Contains(err.Error(), s.GCStatusPath()) {
		t.Errorf("bad JSON: %v", err)
	}
	for _, other := range []string{`{}`, `[]`, `{"upid": null}`, `"x"`, `{"cairn": 7}`} {
		os.WriteFile(s.GCStatusPath(), []byte(other), 0o600)
		if _, _, err := ReadStatus(s); err == nil || !strings.Contains(err.Error(), s.GCStatusPath()) {
			t.Errorf("%s: %v", other, err)
		}
	}
	os.Remove(s.GCStatusPath())
	unix.Mkfifo(s.GCStatusPath(), 0o600)
	if _, _, err := ReadStatus(s); err == nil || !strings.Contains(err.Error(), s.GCStatusPath()) {
		t.Errorf("fifo: %v", err)
	}
	os.Remove(s.GCStatusPath())
	os.WriteFile(s.GCStatusPath(), make([]byte, 2<<20), 0o600)
	if _, _, err := ReadStatus(s); err == nil || !strings.Contains(err.Error(), s.GCStatusPath()) {
		t.Errorf("huge: %v", err)
	}
}

// A GC killed between setting a chunk aside and putting it back (a
// backup touched it in that moment) leaves a referenced chunk under its
// hidden name: the next GC's phase 1 finds it missing and marks the
// hidden copy, and its phase 2 puts it back.
func TestRunPutsBackSetAsideChunk(t *testing.T) {
	s := storetest.NewStore(t)
	a := backup(t, s, vm, 0, storetest.RandBytes("a", 3*testChunk))
	var d chunk.Digest
	for d = range digests(t, s, a) {
	}
	p := s.ChunkPath(d)
	if err := os.Rename(p, filepath.Join(filepath.Dir(p), store.AsideName(d.String()))); err != nil {
		t.Fatal(err)
	}
	ageChunks(t, s, 72*time.Hour, false)
	rep := run(t, s, 0)
	if rep.MissingChunks != 1 || rep.RestoredChunks != 1 || rep.RemovedTemp != 0 {
		t.Errorf("report %+v", rep)
	}
	checkChunks(t, s, digests(t, s, a))
	if rep := run(t, s, 0); rep.MissingChunks != 0 || rep.RestoredChunks != 0 {
		t.Errorf("second GC: %+v", rep)
	}
}

// Stray files where groups and snapshots are expected hold no indexes:
// GC passes them over instead of failing.
func TestRunStrayFiles(t *testing.T) {
	s := storetest.NewStore(t)
	a := backup(t, s, vm, 0, storetest.RandBytes("a", 2*testChunk))
	os.WriteFile(filepath.Join(s.Root(), "vm", "200"), []byte("not a group"), 0o600)
	os.WriteFile(filepath.Join(s.GroupPath(vm), "2020-01-01T00:00:00Z"), []byte("not a snapshot"), 0o600)
	rep := run(t, s, 0)
	if rep.IndexFileCount != 1 {
		t.Errorf("report %+v", rep)
	}
	checkChunks(t, s, digests(t, s, a))
}

// .gc-status is PBS's GarbageCollectionStatus (kebab-case, every
// counter), with cairn's report beside it; a status PBS wrote is read.
func TestStatusIsPBSs(t *testing.T) {
	s := storetest.NewStore(t)
	rep := Report{UPID: "UPID:x", State: StateOK, IndexFileCount: 3, IndexDataBytes: 300, DiskBytes: 100,
		DiskChunks: 2, RemovedBytes: 7, RemovedChunks: 1, PendingBytes: 5, PendingChunks: 1, RemovedBad: 1, StillBad: 2}
	if err := saveStatus(s, rep); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.GCStatusPath())
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"index-file-count": 3, "index-data-bytes": 300, "disk-bytes": 100, "disk-chunks": 2,
		"removed-bytes": 7, "removed-chunks": 1, "pending-bytes": 5, "pending-chunks": 1, "removed-bad": 1, "still-bad": 2}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if m["upid"] != "UPID:x" {
		t.Errorf("upid %v", m["upid"])
	}
	if back, ok, err := ReadStatus(s); err != nil || !ok || back != rep {
		t.Errorf("read back %+v %v %v", back, ok, err)
	}
	pbs := `{"upid":"UPID:pbs:1","index-file-count":4,"index-data-bytes":800,"disk-bytes":200,"disk-chunks":9,
		"removed-bytes":0,"removed-chunks":0,"pending-bytes":0,"pending-chunks":0,"removed-bad":0,"still-bad":0}`
	os.WriteFile(s.GCStatusPath(), []byte(pbs), 0o600)
	back, ok, err := ReadStatus(s)
	if err != nil || !ok || back.UPID != "UPID:pbs:1" || back.DiskChunks != 9 || back.DedupFactor != 4 {
		t.Errorf("PBS's status: %+v %v %v", back, ok, err)
	}
}

// failingBegin is a store's collector whose Begin fails as on a file
// system that ignores atime updates.
type failingBegin struct{ store.ChunkCollector }

func (failingBegin) Begin(context.Context, time.Duration) (store.GCStart, error) {
	return store.GCStart{}, fmt.Errorf("atime check: %w", ErrAtimeUnsupported)
}
