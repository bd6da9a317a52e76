package tape

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/jobs/tape/block"
	"github.com/cairnfs/cairn/jobs/tape/media"
)

// A chunk damaged on tape fails only the snapshots that need it.
func TestRestoreDamagedTape(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	d := openDrive(t, dir)
	rep, err := Export(bg, d, f.src, []string{f.a, f.b, f.c}, exportOpts(1))
	if err != nil {
		t.Fatal(err)
	}
	// file 2 of the first tape is a's chunk archive; its last entry is a
	// chunk only a has. Damage the last bytes of the stream.
	path := filepath.Join(dir, "tapefile-2-"+rep.Tapes[0]+".json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := len(raw) - block.Size
	h, err := block.ParseHeader(raw[last:])
	if err != nil {
		t.Fatal(err)
	}
	off := last + block.HeaderSize + h.Size - 11
	if h.Size < 11 {
		off = last - 11
	}
	raw[off] ^= 0x20
	os.WriteFile(path, raw, 0o644)

	target := newStore(t)
	sink, _ := NewStoreSink(bg, target)
	cr := &countingReporter{}
	rr, err := Restore(bg, d, sink, RestoreOptions{Pool: "pool", Logger: quiet, Reporter: cr})
	sink.Close()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]SnapshotResult{}
	for _, s := range rr.Snapshots {
		states[s.Snapshot] = s
	}
	if states[f.a].State != StateFailed || !strings.Contains(states[f.a].Error, "CRC") ||
		states[f.b].State != StateDone || states[f.c].State != StateDone {
		t.Fatalf("states %+v", rr.Snapshots)
	}
	if cr.errors.Load() == 0 {
		t.Fatal("damage not reported")
	}
	sink2 := &StoreSink{s: target}
	if ok, _ := sink2.HasSnapshot(f.a); ok {
		t.Fatal("incomplete snapshot a is visible")
	}
	snap, _ := ParseSnapshot(f.a)
	if _, err := os.Stat(target.SnapshotPath(snap)); !os.IsNotExist(err) {
		t.Fatalf("directory of the failed snapshot left behind: %v", err)
	}
	sameSnapshot(t, f.s, target, f.b)
	sameSnapshot(t, f.s, target, f.c)
}

// Restore refuses a media set whose catalog is missing.
func TestRestoreWithoutCatalog(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	d := openDrive(t, dir)
	rep, err := Export(bg, d, f.src, []string{f.a}, exportOpts(1))
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(media.CatalogDir(d))
	_, err = Restore(bg, d, &StoreSink{s: newStore(t)}, RestoreOptions{MediaSet: mustUUID(t, rep.MediaSet), Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "rebuild") {
		t.Fatalf("restore without catalog: %v", err)
	}
	// rebuilding the catalog from the tape makes it restorable again
	c, err := media.RebuildCatalog(bg, d, rep.Tapes[0], quiet)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	target := newStore(t)
	sink, _ := NewStoreSink(bg, target)
	rr, err := Restore(bg, d, sink, RestoreOptions{MediaSet: mustUUID(t, rep.MediaSet), Logger: quiet})
	sink.Close()
	if err != nil || rr.Failed() != 0 || len(rr.Snapshots) != 1 {
		t.Fatalf("restore after rebuild: %+v %v", rr, err)
	}
	sameSnapshot(t, f.s, target, f.a)
}
