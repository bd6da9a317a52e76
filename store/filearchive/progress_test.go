package filearchive

import (
	"context"
	"testing"

	"github.com/cairnfs/cairn/store"
)

// TestProgress: a backup counts the files and bytes it stores; one with
// a reference also gives the reference's totals, from the reuse plan's
// walk, as an estimate of its own. The first backup has none.
func TestProgress(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src) // 30 files of 30000 bytes and a hard link to one
	s := newStore(t)
	p := new(Progress)
	res, _ := backupTree(t, s, src, Options{ChunkSize: 64 << 10, Progress: p})
	if p.Files.Load() != 30 || p.Bytes.Load() != 30*30000 || p.Ref.Load() != nil {
		t.Errorf("first backup: %d files, %d bytes, reference %+v", p.Files.Load(), p.Bytes.Load(), p.Ref.Load())
	}
	want := int64(res.Walk.Bytes)
	changeTree(t, src) // one file gone, one new, one 30000 → 12345 bytes
	p = new(Progress)
	res, _ = backupTree(t, s, src, Options{ChunkSize: 64 << 10, Progress: p})
	if ref := p.Ref.Load(); ref == nil || *ref != (Totals{Files: 30, Bytes: want}) {
		t.Errorf("reference totals %+v, want 30 files of %d bytes", ref, want)
	}
	if p.Files.Load() != 30 || p.Bytes.Load() != int64(res.Walk.Bytes) {
		t.Errorf("second backup: %d files, %d bytes; result %+v", p.Files.Load(), p.Bytes.Load(), res)
	}
}

// TestCountFiles: a split archive's files are counted from its stat
// table, hard links aside; a single-stream archive has none.
func TestCountFiles(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src) // 30 files and a hard link
	s := newStore(t)
	c, err := store.NewCache(s, 16<<20)
	must(t, err)
	defer c.Close()
	for _, mode := range []Mode{ModeData, ModeMetadata, ModeLegacy} {
		_, snap := backupTree(t, s, src, Options{ChunkSize: 64 << 10, Mode: mode})
		m, err := s.ReadManifest(snap)
		must(t, err)
		ar, err := store.FindArchive(m, "root.pxar")
		must(t, err)
		n, ok, err := CountFiles(context.Background(), s, snap, m, ar, c)
		if want := mode != ModeLegacy; err != nil || ok != want || (ok && n != 30) {
			t.Errorf("%v: %d files, %v, %v; want 30, %v", mode, n, ok, err, want)
		}
	}
}
