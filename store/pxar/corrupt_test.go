package pxar

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// walkAll opens an archive and visits up to limit entries: lists every
// directory, looks every listed name up and reads every file.
func walkAll(meta, payload []byte, limit int) error {
	ctx := context.Background()
	var pr io.ReaderAt
	if payload != nil {
		pr = bytes.NewReader(payload)
	}
	a, err := NewAccessor(ctx, bytes.NewReader(meta), int64(len(meta)), pr, int64(len(payload)))
	if err != nil {
		return err
	}
	visited := 0
	var walk func(dir *Entry) error
	walk = func(dir *Entry) error {
		sr, err := a.ReadDirSorted(ctx, dir)
		if err != nil {
			return err
		}
		for i := 0; i < sr.Len() && visited < limit; i++ {
			if _, err := sr.Next(ctx); err != nil {
				return err
			}
			visited++
		}
		r, err := a.ReadDir(dir)
		if err != nil {
			return err
		}
		for visited < limit {
			e, err := r.Next(ctx)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			visited++
			if _, err := a.Lookup(ctx, dir, e.Name); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			switch e.Kind {
			case KindDir:
				if err := walk(e); err != nil {
					return err
				}
			case KindFile:
				f, err := a.Open(ctx, e)
				if err != nil {
					return err
				}
				if _, err := io.Copy(io.Discard, io.NewSectionReader(f, 0, f.Size())); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(a.Root())
}

// smallArchive has files "ab" (content "xyz") and "cd", a directory "dir"
// with a hard link "hl" to "ab", and (single stream) inline contents.
func smallArchive(t *testing.T, split bool) (meta, payload []byte) {
	t.Helper()
	return encodeTree(t, dirNode("",
		fileNode("ab", []byte("xyz")),
		fileNode("cd", []byte("0123456789")),
		dirNode("dir", &node{name: "hl", linkTo: "ab"}),
	), split)
}

func patch(b []byte, at int, v []byte) []byte {
	b = bytes.Clone(b)
	copy(b[at:], v)
	return b
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// itemAt finds the offset of the first item of type typ whose content
// starts with prefix.
func itemAt(t *testing.T, b []byte, typ uint64, prefix string) int {
	t.Helper()
	needle := le64(typ)
	for o := 0; ; {
		i := bytes.Index(b[o:], needle)
		if i < 0 {
			t.Fatalf("no %s item with %q", typeName(typ), prefix)
		}
		o += i
		if strings.HasPrefix(string(b[o+16:]), prefix) {
			return o
		}
		o++
	}
}

// tableItem is the offset of name's item in the goodbye table at gb.
func tableItem(t *testing.T, b []byte, gb int, name string) int {
	t.Helper()
	n := int(binary.LittleEndian.Uint64(b[gb+8:])-16)/24 - 1
	for i := range n {
		if o := gb + 16 + 24*i; binary.LittleEndian.Uint64(b[o:]) == HashFilename(name) {
			return o
		}
	}
	t.Fatalf("%q not in goodbye table at %d", name, gb)
	return 0
}

func TestCorruptInput(t *testing.T) {
	meta, payload := smallArchive(t, true)
	smeta, _ := smallArchive(t, false)
	gb := itemAt(t, meta, TypeGoodbye, "")
	for gb2 := gb + 1; ; gb2++ { // the root's goodbye table is the last one
		i := bytes.Index(meta[gb2:], le64(TypeGoodbye))
		if i < 0 {
			break
		}
		gb = gb2 + i
		gb2 = gb
	}
	cases := []struct {
		name    string
		meta    []byte
		want    string
		payload []byte
	}{
		{"slash in name", patch(meta, itemAt(t, meta, TypeFilename, "ab")+16, []byte("a/")), "invalid file name", nil},
		{"dotdot name", patch(meta, itemAt(t, meta, TypeFilename, "ab")+16, []byte("..")), "invalid file name", nil},
		{"NUL in name", patch(meta, itemAt(t, meta, TypeFilename, "ab")+16, []byte("a\x00")), "invalid file name", nil},
		{"name not terminated", patch(meta, itemAt(t, meta, TypeFilename, "ab")+18, []byte("x")), "not NUL-terminated", nil},
		{"name size overflow", patch(meta, itemAt(t, meta, TypeFilename, "ab")+8, le64(1<<64-1)), "exceeds", nil},
		{"payload ref past end", patch(meta, itemAt(t, meta, TypePayloadRef, "")+24, le64(1<<40)), "outside the payload stream", nil},
		{"payload ref overflow", patch(meta, itemAt(t, meta, TypePayloadRef, "")+16, le64(1<<64-8)), "out of range", nil},
		{"payload truncated", meta, "outside the payload stream", payload[:len(payload)-20]},
		{"payload header wrong", meta, "expected PAYLOAD item", patch(payload, 16+8, le64(99))},
		{"no payload start marker", meta, "no payload start marker", patch(payload, 0, le64(TypePayload))},
		{"goodbye hash unsorted", patch(meta, gb+16, le64(12345)), "not sorted by hash", nil},
		{"goodbye hash mismatch", patch(meta, gb+16, le64(binary.LittleEndian.Uint64(meta[gb+16:])+1)), "does not match", nil},
		{"goodbye offset outside", patch(meta, gb+16+8, le64(1<<50)), "outside its directory", nil},
		{"goodbye dir size too big", patch(meta, tableItem(t, meta, gb, "dir")+16, le64(1<<40)), "runs past its parent", nil},
		{"no tail marker", patch(meta, len(meta)-24, le64(1)), "no goodbye tail marker", nil},
		{"tail size overflow", patch(meta, len(meta)-8, le64(1<<64-8)), "goodbye table size", nil},
		{"tail offset overflow", patch(meta, len(meta)-16, le64(1<<63)), "goodbye tail offset", nil},
		{"mode mismatch", patch(meta, itemAt(t, meta, TypeFilename, "ab")+19+16, le64(ModeIFDIR|0o755)), "PAYLOAD_REF item in an entry of mode", nil},
		{"hardlink offset", patch(meta, itemAt(t, meta, TypeHardlink, "")+16, le64(1<<40)), "does not point before", nil},
		{"hardlink to dir", patch(meta, itemAt(t, meta, TypeHardlink, "")+16, le64(uint64(itemAt(t, meta, TypeFilename, "hl")-itemAt(t, meta, TypeFilename, "dir")))), "not a regular file", nil},
		{"inline payload overflow", patch(smeta, itemAt(t, smeta, TypePayload, "xyz")+8, le64(1<<63)), "runs past", nil},
		{"unknown item", patch(meta, itemAt(t, meta, TypePayloadRef, ""), le64(0x1234)), "unexpected", nil},
		{"version", patch(meta, 16, le64(7)), "unknown format version", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.payload
			if p == nil && bytes.Equal(c.meta[:8], le64(TypeFormatVersion)) {
				p = payload
			}
			err := walkAll(c.meta, p, 1000)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want corruption error containing %q", err, c.want)
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "offset") {
				t.Fatalf("error %v does not name an offset", err)
			}
		})
	}
	if err := walkAll(meta, payload, 1000); err != nil {
		t.Fatalf("unmodified archive: %v", err)
	}
}

// Every truncation of an archive is detected.
func TestTruncated(t *testing.T) {
	for _, split := range []bool{true, false} {
		meta, payload := smallArchive(t, split)
		for n := 0; n < len(meta); n++ {
			if err := walkAll(meta[:n], payload, 1000); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("split=%v: metadata cut to %d bytes: %v", split, n, err)
			}
		}
	}
}

func TestEncoderRejects(t *testing.T) {
	root := Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}}
	file := Metadata{Stat: Stat{Mode: ModeIFREG | 0o644}}
	newEnc := func(split bool) *Encoder {
		var p io.Writer
		if split {
			p = io.Discard
		}
		e, err := NewEncoder(io.Discard, p, &root)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	add := func(e *Encoder, name string) error {
		_, err := e.AddFile(name, &file, 0, bytes.NewReader(nil))
		return err
	}
	for _, name := range []string{"", ".", "..", "a/b", "a\x00b", strings.Repeat("x", MaxFilenameLen+1)} {
		if err := add(newEnc(true), name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("name %q: %v", name, err)
		}
	}
	e := newEnc(true)
	if err := add(e, "b"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if err := add(e, name); !errors.Is(err, ErrOrder) {
			t.Errorf("%q after b: %v", name, err)
		}
	}
	if err := e.AddSymlink("c", &file, "x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("symlink with file mode: %v", err)
	}
	if err := e.AddHardlink("d", "b", LinkOffset(1<<40)); !errors.Is(err, ErrInvalid) {
		t.Errorf("forward hard link: %v", err)
	}
	if _, err := e.AddFileRef("e", &file, 0, 5); !errors.Is(err, ErrState) {
		t.Errorf("reference before payload position: %v", err)
	}
	if err := e.FinishDirectory(); !errors.Is(err, ErrState) {
		t.Errorf("finishing the root: %v", err)
	}
	if err := e.CreateDirectory("f", &root); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); !errors.Is(err, ErrState) {
		t.Errorf("close with open directory: %v", err)
	}
	if _, err := newEnc(false).AddFileRef("a", &file, 0, 1); !errors.Is(err, ErrNoPayload) {
		t.Errorf("reference in single stream: %v", err)
	}
	e = newEnc(true)
	if _, err := e.AddFileRef("a", &file, e.PayloadPosition(), 10); err != nil {
		t.Fatal(err)
	}
	if err := add(e, "b"); !errors.Is(err, ErrState) {
		t.Errorf("AddFile inside referenced payload: %v", err)
	}
	if err := e.Close(); !errors.Is(err, ErrState) {
		t.Errorf("close with dangling reference: %v", err)
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("disk on fire")
	}
	k := min(len(p), r.n)
	clear(p[:k])
	for i := range k {
		p[i] = 'a'
	}
	r.n -= k
	return k, nil
}

// A reader that fails or runs short leaves a complete, zero-filled entry.
func TestContentError(t *testing.T) {
	for _, split := range []bool{true, false} {
		var mb, pb bytes.Buffer
		var pw io.Writer
		if split {
			pw = &pb
		}
		root := Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}}
		file := Metadata{Stat: Stat{Mode: ModeIFREG | 0o644}}
		e, err := NewEncoder(&mb, pw, &root)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.AddFile("fail", &file, 10, &failingReader{n: 3})
		var ce *ContentError
		if !errors.As(err, &ce) || ce.Written != 3 {
			t.Fatalf("failing reader: %v", err)
		}
		_, err = e.AddFile("short", &file, 10, strings.NewReader("abc"))
		if !errors.As(err, &ce) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("short reader: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		var p []byte
		if split {
			p = pb.Bytes()
		}
		a := openArchive(t, mb.Bytes(), p)
		ent, err := a.LookupPath(context.Background(), "fail")
		if err != nil {
			t.Fatal(err)
		}
		r, _ := a.Open(context.Background(), ent)
		got, _ := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		if string(got) != "aaa\x00\x00\x00\x00\x00\x00\x00" {
			t.Errorf("split=%v: content %q", split, got)
		}
	}
}
