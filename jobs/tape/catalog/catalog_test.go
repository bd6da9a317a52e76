package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

func digest(i int) chunk.Digest { return chunk.Sum([]byte{byte(i), byte(i >> 8)}) }

func setLabel() *format.MediaSetLabel {
	return &format.MediaSetLabel{Pool: "p", UUID: format.NewUUID(), SeqNr: 1}
}

// fill registers: file 2 chunk archive (3 chunks), file 3 snapshot, file 5
// chunk archive of another store (file 4 is a catalog archive, not
// recorded).
func fill(t *testing.T, c *Catalog) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.RegisterChunkArchive(format.NewUUID(), 2, "s1", []chunk.Digest{digest(1), digest(2), digest(3)}))
	must(c.RegisterSnapshot(format.NewUUID(), 3, "s1", "vm/100/2024-06-05T12:00:00Z"))
	must(c.RegisterChunkArchive(format.NewUUID(), 5, "s2", []chunk.Digest{digest(4)}))
	must(c.Commit())
}

func TestCreateRegisterReopen(t *testing.T) {
	dir := t.TempDir()
	media, set := format.NewUUID(), setLabel()
	c, err := Create(dir, media, set)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, c)
	c.Close()
	if _, err := os.Stat(Path(dir, media)); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, media, set, false)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := r.LookupChunk("s1", digest(2)); !ok || n != 2 {
		t.Fatalf("chunk 2 -> %d %v", n, ok)
	}
	if _, ok := r.LookupChunk("s2", digest(2)); ok {
		t.Fatal("chunk of s1 found in s2")
	}
	if n, ok := r.LookupSnapshot("s1", "vm/100/2024-06-05T12:00:00Z"); !ok || n != 3 {
		t.Fatalf("snapshot -> %d %v", n, ok)
	}
	if last, _ := r.LastFile(); last != 5 {
		t.Fatalf("LastFile = %d", last)
	}
	if u, seq, ok := r.MediaSet(); !ok || u != set.UUID || seq != 1 {
		t.Fatalf("MediaSet = %v %d %v", u, seq, ok)
	}
	files := r.Files()
	if len(files) != 5 || files[2].Kind != KindChunkArchive || files[2].Chunks != 3 || files[3].Kind != KindSnapshot || files[4].Number != 5 {
		t.Fatalf("Files = %+v", files)
	}
	if !reflect.DeepEqual(r.Stores(), []string{"s1", "s2"}) || r.Chunks("s1") != 3 {
		t.Fatalf("stores %v chunks %d", r.Stores(), r.Chunks("s1"))
	}
	if err := r.RegisterSnapshot(format.NewUUID(), 6, "s1", "x"); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("register read-only: %v", err)
	}
	// Parse of the same bytes gives the same catalog
	raw, _ := os.ReadFile(Path(dir, media))
	p, err := Parse(bytes.NewReader(raw), media)
	if err != nil || !reflect.DeepEqual(p.Files(), r.Files()) {
		t.Fatalf("Parse: %v", err)
	}
}

// The bytes are PBS's record layouts (repr(C) structs with padding).
func TestRecordLayout(t *testing.T) {
	dir := t.TempDir()
	media, set := format.NewUUID(), setLabel()
	c, err := Create(dir, media, set)
	if err != nil {
		t.Fatal(err)
	}
	au, su := format.NewUUID(), format.NewUUID()
	if err := c.RegisterChunkArchive(au, 2, "st", []chunk.Digest{digest(9)}); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterSnapshot(su, 3, "st", "vm/1/T"); err != nil {
		t.Fatal(err)
	}
	c.Commit()
	c.Close()
	got, _ := os.ReadFile(Path(dir, media))
	le64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	var want []byte
	want = append(want, 76, 142, 232, 193, 32, 168, 137, 113)
	want = append(append(append(append(want, 'L'), le64(0)...), media[:]...), le64(0)...)
	want = append(append(append(append(want, 'L'), le64(1)...), set.UUID[:]...), le64(1)...)
	want = append(append(append(want, 'A'), le64(2)...), au[:]...)
	want = append(want, 2, 0, 0, 0, 0, 0, 0, 0, 's', 't')
	d := digest(9)
	want = append(append(want, 'C'), d[:]...)
	want = append(append(append(want, 'E'), le64(2)...), au[:]...)
	want = append(append(append(want, 'S'), le64(3)...), su[:]...)
	want = append(want, 2, 0, 6, 0, 0, 0, 0, 0)
	want = append(want, "st:vm/1/T"...)
	if !bytes.Equal(got, want) {
		t.Fatalf("catalog bytes\n got % x\nwant % x", got, want)
	}
}

func TestTornTail(t *testing.T) {
	for name, tail := range map[string][]byte{
		"partial record": {'A', 7, 0, 0},
		"open archive":   append(appendArchiveStart(nil, 6, format.NewUUID(), "s1"), append([]byte{'C'}, make([]byte, 32)...)...),
		"partial name":   appendSnapshot(nil, 6, format.NewUUID(), "s1", "vm/1/x")[:36],
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			media := format.NewUUID()
			c, _ := Create(dir, media, nil)
			fill(t, c)
			size := c.Size()
			c.Close()
			f, _ := os.OpenFile(Path(dir, media), os.O_APPEND|os.O_WRONLY, 0)
			f.Write(tail)
			f.Close()
			c, err := Open(dir, media, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			if c.Size() != size {
				t.Fatalf("size after cutting tail = %d, want %d", c.Size(), size)
			}
			if _, ok := c.LookupChunk("s1", chunk.Digest{}); ok {
				t.Fatal("chunk of the unfinished archive is visible")
			}
			if err := c.RegisterSnapshot(format.NewUUID(), 6, "s1", "vm/1/y"); err != nil {
				t.Fatal(err)
			}
			if err := c.Commit(); err != nil {
				t.Fatal(err)
			}
			c.Close()
			c, err = Open(dir, media, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if n, ok := c.LookupSnapshot("s1", "vm/1/y"); !ok || n != 6 {
				t.Fatalf("snapshot after repair: %d %v", n, ok)
			}
		})
	}
}

func TestBadCatalogs(t *testing.T) {
	dir := t.TempDir()
	media, set := format.NewUUID(), setLabel()
	c, _ := Create(dir, media, set)
	fill(t, c)
	if err := c.RegisterSnapshot(format.NewUUID(), 4, "s1", "x"); !errors.Is(err, ErrOrder) {
		t.Fatalf("snapshot going back: %v", err)
	}
	if err := c.RegisterChunkArchive(format.NewUUID(), 1, "s1", nil); !errors.Is(err, ErrOrder) {
		t.Fatalf("archive at file 1: %v", err)
	}
	if err := c.RegisterSnapshot(format.NewUUID(), 9, "bad:store", "x"); err == nil {
		t.Fatal("store name with ':' accepted")
	}
	c.Close()
	other := setLabel()
	if _, err := Open(dir, media, other, false); !errors.Is(err, ErrMismatch) {
		t.Fatalf("other media set: %v", err)
	}
	if _, err := Open(dir, format.NewUUID(), nil, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing catalog: %v", err)
	}
	raw, _ := os.ReadFile(Path(dir, media))
	wrongMedia := format.NewUUID()
	os.WriteFile(Path(dir, wrongMedia), raw, 0o644)
	if _, err := Open(dir, wrongMedia, nil, false); !errors.Is(err, ErrMismatch) {
		t.Fatalf("catalog of another tape: %v", err)
	}
	for name, mutate := range map[string]func([]byte){
		"magic":       func(b []byte) { b[0] ^= 1 },
		"record type": func(b []byte) { b[8+33+33] = 'X' },
		"chunk first": func(b []byte) { b[8+33+33] = 'C' },
	} {
		b := bytes.Clone(raw)
		mutate(b)
		if _, err := Parse(bytes.NewReader(b), media); !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrOrder) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Parse(bytes.NewReader(raw[:len(raw)-3]), media); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Parse of a cut catalog: %v", err)
	}
}

func TestSet(t *testing.T) {
	dir := t.TempDir()
	var s Set
	m1, m2 := format.NewUUID(), format.NewUUID()
	c1, _ := Create(dir, m1, nil)
	fill(t, c1)
	c2, _ := Create(dir, m2, nil)
	c2.RegisterChunkArchive(format.NewUUID(), 2, "s1", []chunk.Digest{digest(7)})
	c2.RegisterSnapshot(format.NewUUID(), 3, "s1", "ct/1/T")
	s.Add(c1)
	s.Add(c2)
	if m, n, ok := s.LookupChunk("s1", digest(7)); !ok || m != m2 || n != 2 {
		t.Fatalf("LookupChunk = %v %d %v", m, n, ok)
	}
	if !s.ContainsChunk("s1", digest(1)) || s.ContainsChunk("s1", digest(4)) {
		t.Fatal("ContainsChunk wrong")
	}
	snaps := s.Snapshots()
	if len(snaps) != 2 || snaps[0].Snapshot != "ct/1/T" || snaps[0].Media != m2 {
		t.Fatalf("Snapshots = %+v", snaps)
	}
	if m, n, ok := s.LookupSnapshot("s1", "vm/100/2024-06-05T12:00:00Z"); !ok || m != m1 || n != 3 {
		t.Fatalf("LookupSnapshot = %v %d %v", m, n, ok)
	}
}
