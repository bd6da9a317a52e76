package media

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

func TestLabelling(t *testing.T) {
	dir := t.TempDir()
	d, p := openPool(t, dir, PoolOptions{})
	d.CreateTape("T1", 0)
	d.Load("T1")
	fw, _ := d.WriteFile()
	fw.Write([]byte("old data"))
	fw.Finish(false)
	if _, err := LabelTape(d, p.Inventory(), "T1", "pool", false); !errors.Is(err, ErrNotBlank) {
		t.Fatalf("label a used tape: %v", err)
	}
	l, err := LabelTape(d, p.Inventory(), "T1", "pool", true)
	if err != nil {
		t.Fatal(err)
	}
	got, set, err := ReadLabels(d)
	if err != nil || got != l || set != nil {
		t.Fatalf("labels %+v %+v %v", got, set, err)
	}
	inv, _ := LoadInventory(dir)
	if m, ok := inv.LookupLabel("T1"); !ok || m.Label != l {
		t.Fatalf("inventory: %+v", m)
	}
	if err := EraseTape(d, p.Inventory(), "T1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Inventory().LookupLabel("T1"); ok {
		t.Fatal("erased tape still in the inventory")
	}
	if _, _, err := ReadLabels(d); !errors.Is(err, drive.ErrEndOfData) {
		t.Fatalf("labels of an erased tape: %v", err)
	}
}

func TestRebuildSkipsUnfinishedAndRejectsCorrupt(t *testing.T) {
	dir := t.TempDir()
	d, p := openPool(t, dir, PoolOptions{TapeSize: 8 << 20, AutoCreate: true})
	chunks := makeChunks(t, 8, 3, 100<<10)
	w := writeSet(t, p, WriterOptions{}, chunks)
	label := w.Stats().Tapes[0]
	// an interrupted write at the end
	fw, _ := d.WriteFile()
	fw.Write(make([]byte, 300<<10))
	fw.Close()
	path := catalog.Path(CatalogDir(d), p.Inventory().List()[0].Label.UUID)
	before, _ := os.ReadFile(path)
	c, err := RebuildCatalog(ctx, d, label, quiet)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("rebuild with an unfinished last file differs")
	}
	// flip a byte inside the first chunk's blob (file 2)
	tf := dir + "/tapefile-2-" + label + ".json"
	raw, _ := os.ReadFile(tf)
	raw[len(raw)/3] ^= 0x55
	os.WriteFile(tf, raw, 0o644)
	_, err = RebuildCatalog(ctx, d, label, quiet)
	if !errors.Is(err, format.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("file 2")) {
		t.Fatalf("rebuild of a corrupt tape: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("failed rebuild replaced the catalog")
	}
}
