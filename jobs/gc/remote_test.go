package gc

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// remoteStore is a remote store on a fresh bucket of the test MinIO and
// a handle on that bucket of the test's own.
func remoteStore(t *testing.T) (*store.Store, s3store.Config, *objstore.Bucket) {
	t.Helper()
	s, cfg := storetest.NewRemoteStoreOn(t, miniotest.Start(t), s3store.Config{})
	return s, cfg, openBucket(t, cfg)
}

// openBucket opens the bucket of cfg with a handle of the test's own.
func openBucket(t testing.TB, cfg s3store.Config) *objstore.Bucket {
	t.Helper()
	cred, err := objstore.LoadCredentials(cfg.CredentialsFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := objstore.Open(context.Background(), cfg.Config, cred, objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chunkObjects lists the bucket's chunk objects.
func chunkObjects(t *testing.T, b *objstore.Bucket) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for o, err := range b.List(context.Background(), ".chunks/", "") {
		if err != nil {
			t.Fatal(err)
		}
		out[o.Key] = true
	}
	return out
}

// inBucket tells whether chunk d's object exists.
func inBucket(t *testing.T, b *objstore.Bucket, d chunk.Digest) bool {
	t.Helper()
	_, err := b.Head(context.Background(), chunkKey(d))
	if err != nil && !errors.Is(err, objstore.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// chunkKey is chunk d's key in the bucket (the store's layout).
func chunkKey(d chunk.Digest) string { h := d.String(); return ".chunks/" + h[:4] + "/" + h }

// secondTick waits past the current second: HTTP dates (LastModified,
// lease starts) have whole seconds.
func secondTick() { time.Sleep(1100 * time.Millisecond) }

// The remote GC removes exactly the chunks no snapshot references whose
// LastModified is before its start (cutoff 0), keeps every chunk of the
// other snapshots, finished or not (one whose manifest never reached the
// bucket), counts into the same report as the local GC, and names a
// referenced chunk missing from the bucket.
func TestRemoteGCRemovesUnreferenced(t *testing.T) {
	ctx := context.Background()
	s, _, b := remoteStore(t)
	x, y, z := storetest.RandBytes("x", 3*testChunk), storetest.RandBytes("y", 3*testChunk), storetest.RandBytes("z", 2*testChunk)
	a := backup(t, s, vm, 0, append(append([]byte{}, x...), y...))
	keep := backup(t, s, store.Group{Type: store.TypeCT, ID: "7"}, 0, append(append([]byte{}, y...), z...))
	unfinished := backup(t, s, store.Group{Type: store.TypeHost, ID: "u"}, 0, storetest.RandBytes("u", 2*testChunk))
	wantKept := digests(t, s, keep)
	for d := range digests(t, s, unfinished) {
		wantKept[d] = true
	}
	// a backup that died before its manifest reached the bucket
	if err := b.Delete(ctx, strings.TrimPrefix(s.SnapshotPath(unfinished), s.Root()+"/")+"/"+store.ManifestName); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetSnapshot(ctx, a); err != nil {
		t.Fatal(err)
	}
	var missing chunk.Digest
	for d := range digests(t, s, keep) {
		missing = d
		break
	}
	if err := b.Delete(ctx, chunkKey(missing)); err != nil {
		t.Fatal(err)
	}
	delete(wantKept, missing)
	before := chunkObjects(t, b)
	secondTick()
	var log bytes.Buffer
	rep, err := Run(ctx, s, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil || rep.State != StateOK {
		t.Fatalf("gc: %v, report %+v", err, rep)
	}
	for d := range wantKept {
		if !inBucket(t, b, d) {
			t.Errorf("chunk %s is gone, but a snapshot uses it", d)
		}
	}
	after := chunkObjects(t, b)
	if want := len(before) - len(wantKept); rep.RemovedChunks != int64(want) || len(after) != len(wantKept) || want < 3 {
		t.Errorf("removed %d chunks, %d left; want %d removed, %d left", rep.RemovedChunks, len(after), want, len(wantKept))
	}
	if rep.DiskChunks != int64(len(wantKept)) || rep.PendingChunks != 0 || rep.ChunkFiles != int64(len(before)) ||
		rep.MissingChunks != 1 || rep.IndexFileCount != 2 || rep.DiskBytes <= 0 || rep.RemovedBytes <= 0 {
		t.Errorf("report %+v", rep)
	}
	if !strings.Contains(log.String(), "missing chunk "+missing.String()) {
		t.Errorf("the log does not name the missing chunk:\n%s", log.String())
	}
	if back, ok, err := ReadStatus(s); err != nil || !ok || back.RemovedChunks != rep.RemovedChunks {
		t.Errorf("saved status %+v, %v, %v", back, ok, err)
	}
}

// A writer running beside the GC keeps what it uploaded (the cutoff is
// its start less the margin); once it ended, the next GC removes what no
// snapshot references.
func TestRemoteGCKeepsRunningWritersChunks(t *testing.T) {
	s, _, b := remoteStore(t)
	w, err := s.RegisterWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Done()
	blob, err := chunk.EncodeBlob(nil, storetest.RandBytes("lone", 1000), true)
	if err != nil {
		t.Fatal(err)
	}
	d := chunk.Sum(storetest.RandBytes("lone", 1000))
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	secondTick()
	rep := run(t, s, 0)
	if !inBucket(t, b, d) || rep.RemovedChunks != 0 || rep.PendingChunks != 1 {
		t.Fatalf("with a writer running: chunk there %v, report %+v", inBucket(t, b, d), rep)
	}
	if rep.OldestWriter == nil || !rep.OldestWriter.Equal(w.Start()) || !rep.Cutoff.Equal(w.Start().Add(-WriterMargin)) {
		t.Errorf("writer %v: report's oldest writer %v, cutoff %v", w.Start(), rep.OldestWriter, rep.Cutoff)
	}
	w.Done()
	rep = run(t, s, 0)
	if inBucket(t, b, d) || rep.RemovedChunks != 1 {
		t.Fatalf("after the writer ended: chunk there %v, report %+v", inBucket(t, b, d), rep)
	}
}

// A GC is refused, and removes nothing, while another holds the
// bucket's GC lease.
func TestRemoteGCRefusedWhileHeld(t *testing.T) {
	ctx := context.Background()
	s, cfg, _ := remoteStore(t)
	other := storetest.AttachRemoteStore(t, cfg).ChunkCollector()
	if _, err := other.Begin(ctx, 0); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	rep, err := Run(ctx, s, Options{})
	if !errors.Is(err, store.ErrLocked) || !errors.Is(err, objstore.ErrHeld) || rep.State != StateFailed || rep.RemovedChunks != 0 {
		t.Fatalf("err %v, report %+v", err, rep)
	}
}

// What else a bucket's chunk area may hold: a .bad copy of a referenced
// chunk that is missing stays (the only copy there is), one of a chunk
// nothing references goes like any garbage; keys that are no chunk's
// (a foreign file, a writer's temporary name, a chunk under the wrong
// prefix) are never deleted and fail nothing; the marked set a killed
// GC left in the store directory is removed.
func TestRemoteGCBadCopiesAndForeignKeys(t *testing.T) {
	ctx := context.Background()
	s, _, b := remoteStore(t)
	keep := backup(t, s, vm, 0, storetest.RandBytes("keep", 3*testChunk))
	gone := backup(t, s, vm, 1, storetest.RandBytes("gone", 2*testChunk))
	var kd, gd chunk.Digest
	for d := range digests(t, s, keep) {
		kd = d
	}
	for d := range digests(t, s, gone) {
		gd = d
	}
	for _, d := range []chunk.Digest{kd, gd} {
		if _, err := s.MarkBad(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ForgetSnapshot(ctx, gone); err != nil {
		t.Fatal(err)
	}
	h := kd.String()
	foreign := []string{".chunks/README", ".chunks/zzzz/x", ".chunks/" + h[:4] + "/" + h + ".tmp_1",
		".chunks/0000/" + h, ".chunks/" + h[:4] + "/" + h + "/x"}
	for _, k := range foreign {
		if _, err := b.Put(ctx, k, objstore.Cond{}, []byte("not a chunk")); err != nil {
			t.Fatal(err)
		}
	}
	leftover := filepath.Join(s.Root(), ".gc-marks-killed")
	if err := os.Mkdir(leftover, 0o700); err != nil {
		t.Fatal(err)
	}
	secondTick()
	rep := run(t, s, 0)
	if rep.MissingChunks != 1 || rep.StillBad != 1 || rep.RemovedBad != 1 {
		t.Errorf("report %+v", rep)
	}
	if _, err := b.Head(ctx, chunkKey(kd)+".0.bad"); err != nil {
		t.Errorf("the .bad copy of a referenced missing chunk: %v", err)
	}
	if _, err := b.Head(ctx, chunkKey(gd)+".0.bad"); !errors.Is(err, objstore.ErrNotExist) {
		t.Errorf("the .bad copy of an unreferenced chunk: %v, want it deleted", err)
	}
	for _, k := range foreign {
		if _, err := b.Head(ctx, k); err != nil {
			t.Errorf("foreign key %s: %v", k, err)
		}
	}
	if _, err := os.Lstat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a killed GC's marked set: %v, want it removed", err)
	}
}
