package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestChunkUploadStats: a backup records its chunk_upload_stats in the
// manifest; a manifest committed from outside (a tape restore) loses
// the source's verify state and keeps the rest; a group of unfinished
// snapshots only has no latest, as unfinished.
func TestChunkUploadStats(t *testing.T) {
	s := testStore(t)
	g := Group{Type: "vm", ID: "1"}
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	b, err := s.StartBackup(context.Background(), g, at)
	if err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, bytes.Repeat([]byte("cairn"), 1<<18), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st UploadStats
	if err := b.AddImage(context.Background(), "disk.img", f, ImageOptions{ChunkSize: 1 << 20, Stats: &st}); err != nil {
		t.Fatal(err)
	}
	want := ChunkUploadStatsOf(st.Snapshot())
	b.SetChunkUploadStats(want)
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	m, err := s.ReadManifest(b.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := m.ChunkUploadStats(); !ok || got != want || got.Count != 2 || got.Size != 5<<18 || got.CompressedSize <= 0 || got.CompressedSize >= got.Size {
		t.Fatalf("recorded %+v %v, want %+v", got, ok, want)
	}

	// a manifest with a verify state, committed from a hidden file
	m.SetVerifyState(VerifyState{State: "ok", UPID: "x"})
	blob, err := EncodeManifest(b.Snapshot(), m)
	if err != nil {
		t.Fatal(err)
	}
	dir := s.SnapshotPath(b.Snapshot())
	os.Remove(filepath.Join(dir, ManifestName))
	if err := os.WriteFile(filepath.Join(dir, ".restored"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitManifest(context.Background(), b.Snapshot(), ".restored"); err != nil {
		t.Fatal(err)
	}
	m, err = s.ReadManifest(b.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.VerifyState(); ok {
		t.Errorf("the source's verify state was kept")
	}
	if got, ok := m.ChunkUploadStats(); !ok || got != want {
		t.Errorf("upload stats after commit: %+v %v", got, ok)
	}

	u := Group{Type: "vm", ID: "2"}
	if err := os.MkdirAll(s.SnapshotPath(Snapshot{Group: u, Time: at}), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Latest(u); !errors.Is(err, ErrUnfinished) || !errors.Is(err, ErrNotFound) {
		t.Errorf("latest of unfinished snapshots only: %v", err)
	}
	if _, err := s.Latest(Group{Type: "vm", ID: "3"}); errors.Is(err, ErrUnfinished) || !errors.Is(err, ErrNotFound) {
		t.Errorf("latest of a missing group: %v", err)
	}
}
