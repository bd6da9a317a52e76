package format

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

func TestContentHeaderLayout(t *testing.T) {
	h := ContentHeader{ContentMagic: MagicChunkArchive, UUID: NewUUID(), Ctime: 0x0102030405060708, Size: 0x0a0b0c0d, PartNumber: 7}
	b, _ := h.AppendBinary(nil)
	if len(b) != ContentHeaderSize {
		t.Fatalf("header is %d bytes", len(b))
	}
	if !bytes.Equal(b[:8], MagicContentHeader[:]) || !bytes.Equal(b[8:16], MagicChunkArchive[:]) ||
		!bytes.Equal(b[16:32], h.UUID[:]) || binary.LittleEndian.Uint64(b[32:]) != 0x0102030405060708 ||
		binary.LittleEndian.Uint32(b[40:]) != 0x0a0b0c0d || b[44] != 7 || !bytes.Equal(b[45:], []byte{0, 0, 0}) {
		t.Fatalf("layout: % x", b)
	}
	got, err := ParseContentHeader(b)
	if err != nil || got != h {
		t.Fatalf("parse = %+v, %v", got, err)
	}
	b[0] ^= 1
	if _, err := ParseContentHeader(b); !errors.Is(err, ErrNotContent) {
		t.Fatalf("bad magic: %v", err)
	}
}

func TestUUID(t *testing.T) {
	u := NewUUID()
	s := u.String()
	if len(s) != 36 || s[14] != '4' {
		t.Fatalf("uuid %s", s)
	}
	v, err := ParseUUID(s)
	if err != nil || v != u {
		t.Fatalf("ParseUUID(%s) = %v, %v", s, v, err)
	}
	js, _ := json.Marshal(u)
	var w UUID
	if err := json.Unmarshal(js, &w); err != nil || w != u {
		t.Fatalf("json %s -> %v %v", js, w, err)
	}
	for _, bad := range []string{"", "xyz", strings.Repeat("g", 32), s[:35]} {
		if _, err := ParseUUID(bad); err == nil {
			t.Fatalf("ParseUUID(%q) succeeded", bad)
		}
	}
}

// PBS-written label JSON (serde field names) reads back.
func TestLabelsFromPBSJSON(t *testing.T) {
	for _, tc := range []struct {
		file  string
		magic [8]byte
	}{{"testdata/media-label.json", MagicMediaLabel}, {"testdata/media-set-label.json", MagicMediaSetLabel}} {
		js, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		m, w := newTape(0)
		h := NewContentHeader(tc.magic, len(js))
		b, _ := h.AppendBinary(nil)
		w.Write(append(b, js...))
		w.Finish(false)
		if tc.magic == MagicMediaLabel {
			l, err := ReadMediaLabel(m.reader(t))
			if err != nil || l.LabelText != "TAPE01L8" || l.Pool != "daily" || l.Ctime != 1717600000 ||
				l.UUID.String() != "5f1b2a0c-8d4e-4b6a-9c1d-2e3f4a5b6c7d" {
				t.Fatalf("media label %+v, %v", l, err)
			}
		} else {
			l, err := ReadMediaSetLabel(m.reader(t))
			if err != nil || l.Pool != "daily" || l.SeqNr != 2 || l.UUID.String() != "0a1b2c3d-4e5f-4061-8273-8495a6b7c8d9" {
				t.Fatalf("media set label %+v, %v", l, err)
			}
		}
	}
}

func TestLabelRoundTripAndKinds(t *testing.T) {
	m, w := newTape(0)
	l := NewMediaLabel("T1", "pool")
	if err := WriteMediaLabel(w, l); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMediaLabel(m.reader(t))
	if err != nil || got != l {
		t.Fatalf("label %+v, %v", got, err)
	}
	if _, err := ReadMediaSetLabel(m.reader(t)); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("label read as set label: %v", err)
	}
	if _, err := NewChunkArchiveReader(m.reader(t)); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("label read as chunk archive: %v", err)
	}
	// extra data after a label is an error
	m2, w2 := newTape(0)
	writeHeader(w2, MagicMediaLabel, l)
	w2.Write([]byte("junk"))
	w2.Finish(false)
	if _, err := ReadMediaLabel(m2.reader(t)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("label with trailing data: %v", err)
	}
	// a JSON header that is not JSON
	m3, w3 := newTape(0)
	h := NewContentHeader(MagicMediaLabel, 5)
	b, _ := h.AppendBinary(nil)
	w3.Write(append(b, "{{{{{"...))
	w3.Finish(false)
	if _, err := ReadMediaLabel(m3.reader(t)); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("bad JSON: %v", err)
	}
}

func TestCatalogArchive(t *testing.T) {
	info := CatalogInfo{Media: NewUUID(), MediaSet: NewUUID(), SeqNr: 3}
	data := bytes.Repeat([]byte("catalog "), 100000) // 800 kB: several blocks
	m, w := newTape(0)
	if _, done, err := WriteCatalogArchive(w, info, bytes.NewReader(data), int64(len(data))); err != nil || !done {
		t.Fatalf("write: %v %v", done, err)
	}
	r := m.reader(t)
	h, js, err := ReadContentHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenCatalogArchive(r, h, js)
	if err != nil || c.Info != info {
		t.Fatalf("open: %+v %v", c, err)
	}
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	// LEOM in the middle: incomplete
	m, w = newTape(2)
	if _, done, err := WriteCatalogArchive(w, info, bytes.NewReader(data), int64(len(data))); err != nil || done {
		t.Fatalf("write at LEOM: done=%v %v", done, err)
	}
	r = m.reader(t)
	h, js, _ = ReadContentHeader(r)
	c, _ = OpenCatalogArchive(r, h, js)
	if _, err := io.ReadAll(c); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("read incomplete catalog: %v", err)
	}
}
