package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// GCFunc runs a garbage collection that removes every chunk no snapshot
// references (an atime cutoff of 0). The store's package cannot run one
// (package gc is above it): jobs/gc's tests pass gc.Run.
type GCFunc func(t *testing.T, s *store.Store)

// RunLifecycleSuite runs what a snapshot goes through after its backup,
// the same on every kind of store (its metadata seam): published and
// listed, its notes updated, protected from forget and released, its
// group locked against a second writer, forgotten alone and with its
// group. Each test gets a fresh store from open. RunGCSuite is the last
// step, collecting its chunks.
func RunLifecycleSuite(t *testing.T, open func(t testing.TB) *store.Store) {
	runSuite(t, open, []suiteTest{
		{"Publish", testPublish},
		{"UpdateNotes", testUpdateNotes},
		{"Protect", testProtect},
		{"GroupLock", testGroupLock},
		{"ForgetGroup", testForgetGroup},
	})
}

// RunGCSuite forgets one of two snapshots of different data on a fresh
// store from open: gc removes the chunks only the forgotten one used,
// and the other snapshot reads back.
func RunGCSuite(t *testing.T, open func(t testing.TB) *store.Store, gc GCFunc) {
	testGC(t, open(t), gc)
}

var day0 = time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)

// finished lists group's finished snapshots.
func finished(t *testing.T, s *store.Store) []store.Snapshot {
	t.Helper()
	snaps, err := s.Snapshots(group)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	var out []store.Snapshot
	for _, si := range snaps {
		if si.Finished {
			out = append(out, si.Snapshot)
		}
	}
	return out
}

func testPublish(t *testing.T, s *store.Store) {
	if got := finished(t, s); len(got) != 0 {
		t.Fatalf("a new store lists %v", got)
	}
	data := storetest.RandBytes("publish", 3<<20)
	snap := backupImage(t, s, day0, data, nil)
	if got := finished(t, s); len(got) != 1 || got[0] != snap {
		t.Fatalf("after the backup: %v, want [%s]", got, snap)
	}
	m, err := s.ReadManifest(snap)
	must(t, err)
	if _, ok := m.File("disk.img.fidx"); !ok {
		t.Fatalf("manifest of %s names no disk.img.fidx: %+v", snap, m.Files)
	}
	readImage(t, s, snap, data)
}

func testUpdateNotes(t *testing.T, s *store.Store) {
	data := storetest.RandBytes("notes", 2<<20)
	snap := backupImage(t, s, day0, data, nil)
	before, err := s.ReadManifest(snap)
	must(t, err)
	must(t, s.UpdateManifest(context.Background(), snap, func(m *store.Manifest) error {
		raw, _ := json.Marshal("kept for the audit")
		m.Unprotected["notes"] = raw
		return nil
	}))
	after, err := s.ReadManifest(snap)
	must(t, err)
	var notes string
	if err := json.Unmarshal(after.Unprotected["notes"], &notes); err != nil || notes != "kept for the audit" {
		t.Fatalf("notes after the update: %q, %v", notes, err)
	}
	if len(after.Files) != len(before.Files) || after.Files[0] != before.Files[0] {
		t.Fatalf("the update changed the files: %+v, was %+v", after.Files, before.Files)
	}
	readImage(t, s, snap, data)
}

func testProtect(t *testing.T, s *store.Store) {
	ctx := context.Background()
	snap := backupImage(t, s, day0, storetest.RandBytes("protect", 1<<20), nil)
	must(t, s.SetProtected(ctx, snap, true))
	if !s.IsProtected(snap) {
		t.Fatalf("%s not protected after SetProtected", snap)
	}
	if err := s.ForgetSnapshot(ctx, snap); !errors.Is(err, store.ErrProtected) {
		t.Fatalf("forget of a protected snapshot: %v, want ErrProtected", err)
	}
	if got := finished(t, s); len(got) != 1 {
		t.Fatalf("a refused forget removed the snapshot: %v", got)
	}
	must(t, s.SetProtected(ctx, snap, false))
	must(t, s.ForgetSnapshot(ctx, snap))
	if got := finished(t, s); len(got) != 0 {
		t.Fatalf("after forget: %v", got)
	}
	if _, err := s.ReadManifest(snap); err == nil {
		t.Fatalf("the manifest of forgotten %s still reads", snap)
	}
}

func testGroupLock(t *testing.T, s *store.Store) {
	ctx := context.Background()
	s.SetLockWait(0)
	l, err := s.LockGroup(ctx, group)
	must(t, err)
	if l2, err := s.LockGroup(ctx, group); !errors.Is(err, store.ErrLocked) {
		if l2 != nil {
			l2.Unlock()
		}
		t.Fatalf("second lock of a locked group: %v, want ErrLocked", err)
	}
	if b, err := s.StartBackup(ctx, group, day0); !errors.Is(err, store.ErrLocked) {
		if b != nil {
			b.Abort()
		}
		t.Fatalf("a backup of a locked group: %v, want ErrLocked", err)
	}
	must(t, l.Unlock())
	l, err = s.LockGroup(ctx, group)
	must(t, err)
	must(t, l.Unlock())
}

func testForgetGroup(t *testing.T, s *store.Store) {
	data := storetest.RandBytes("group", 1<<20)
	a := backupImage(t, s, day0, data, nil)
	b := backupImage(t, s, day0.Add(time.Hour), data, nil)
	removed, err := s.ForgetGroup(context.Background(), group)
	must(t, err)
	if len(removed) != 2 || removed[0] != a && removed[1] != a || removed[0] != b && removed[1] != b {
		t.Fatalf("ForgetGroup removed %v, want %s and %s", removed, a, b)
	}
	groups, err := s.Groups("")
	must(t, err)
	for _, g := range groups {
		if g == group {
			t.Fatalf("group %s still listed after ForgetGroup", group)
		}
	}
}

func testGC(t *testing.T, s *store.Store, gc GCFunc) {
	ctx := context.Background()
	gone, kept := storetest.RandBytes("gc-gone", 3<<20), storetest.RandBytes("gc-kept", 3<<20)
	a := backupImage(t, s, day0, gone, nil)
	b := backupImage(t, s, day0.Add(time.Hour), kept, nil)
	goneChunks, keptChunks := imageChunks(t, s, a), imageChunks(t, s, b)
	must(t, s.ForgetSnapshot(ctx, a))
	gc(t, s)
	for _, d := range goneChunks {
		if storetest.HasChunk(t, s, d) {
			t.Fatalf("chunk %s of forgotten %s survived the GC", d, a)
		}
	}
	for _, d := range keptChunks {
		if !storetest.HasChunk(t, s, d) {
			t.Fatalf("chunk %s of %s removed by the GC", d, b)
		}
	}
	readImage(t, s, b, kept)
}

// imageChunks lists the chunks of snap's disk.img.
func imageChunks(t *testing.T, s *store.Store, snap store.Snapshot) []chunk.Digest {
	t.Helper()
	m, err := s.ReadManifest(snap)
	must(t, err)
	x, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
	must(t, err)
	defer x.Close()
	out := make([]chunk.Digest, x.Len())
	for i := range out {
		out[i], _, _ = x.Chunk(i)
	}
	return out
}
