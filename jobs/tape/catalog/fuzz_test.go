package catalog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/jobs/tape/format"
)

// FuzzCatalog parses arbitrary media catalogs (seeds: catalogs the real
// writer made): no panic, only catalog errors, and what parses is a
// consistent catalog of no more bytes than the input: file numbers
// increase and every snapshot file is found by its name.
func FuzzCatalog(f *testing.F) {
	media := format.UUID{1, 2, 3}
	for _, withSet := range []bool{false, true} {
		dir := f.TempDir()
		var set *format.MediaSetLabel
		if withSet {
			set = &format.MediaSetLabel{Pool: "p", UUID: format.UUID{9}, SeqNr: 1}
		}
		c, err := Create(dir, media, set)
		if err != nil {
			f.Fatal(err)
		}
		fill(&testing.T{}, c)
		c.Close()
		b, err := os.ReadFile(filepath.Join(dir, media.String()+".log"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data), media)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrOrder) && !errors.Is(err, ErrMismatch) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if c.Size() > int64(len(data)) {
			t.Fatalf("catalog of %d bytes from %d", c.Size(), len(data))
		}
		var prev int64 = -1
		for _, file := range c.Files() {
			if int64(file.Number) <= prev {
				t.Fatalf("file %d after %d", file.Number, prev)
			}
			prev = int64(file.Number)
			if file.Kind == KindSnapshot {
				if n, ok := c.LookupSnapshot(file.Store, file.Snapshot); !ok || n != file.Number {
					t.Fatalf("snapshot %s/%s of file %d not found", file.Store, file.Snapshot, file.Number)
				}
			}
		}
		for _, store := range c.Stores() {
			if c.Chunks(store) < 0 {
				t.Fatalf("store %s: %d chunks", store, c.Chunks(store))
			}
		}
	})
}

// Every truncation of a catalog either fails as corrupt or, cut exactly
// after a record outside a chunk archive, parses to that prefix; never a
// catalog that claims more than it was given.
func TestCatalogTruncatedEverywhere(t *testing.T) {
	dir := t.TempDir()
	media := format.UUID{4}
	c, err := Create(dir, media, &format.MediaSetLabel{Pool: "p", UUID: format.UUID{5}, SeqNr: 2})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, c)
	c.Close()
	data, err := os.ReadFile(Path(dir, media))
	if err != nil {
		t.Fatal(err)
	}
	prefixes := 0
	for n := 0; n < len(data); n++ {
		p, err := Parse(bytes.NewReader(data[:n]), media)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("cut to %d bytes: %v", n, err)
			}
			continue
		}
		if p.Size() != int64(n) {
			t.Fatalf("cut to %d bytes parses as %d bytes", n, p.Size())
		}
		prefixes++
	}
	if prefixes == 0 || prefixes > 8 {
		t.Fatalf("%d truncation points parse", prefixes)
	}
}

// File numbers from 2^48 on are corrupt: 2^64-1 stored as the int64 last
// file is -1, "no file yet", and file 0 could follow it (FuzzCatalog
// found this).
func TestCatalogFileNumberRange(t *testing.T) {
	media := format.UUID{7}
	for _, file := range []uint64{1<<64 - 1, 1 << 63, 1 << 48} {
		b := append([]byte{}, Magic[:]...)
		b = appendSnapshot(b, file, format.UUID{1}, "s", "vm/1/x")
		b = appendSnapshot(b, 2, format.UUID{2}, "s", "vm/1/y")
		if _, err := Parse(bytes.NewReader(b), media); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("snapshot in file %d: %v", file, err)
		}
		if err := newCatalog(media).snapshot(file, format.UUID{1}, "s", "vm/1/x"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("registering file %d: %v", file, err)
		}
	}
}
