package pxar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

// WithAnyOrder keeps entries in the order they were added, at every
// depth; the Accessor finds each of them, and the goodbye tables are the
// ones a sorted archive of the same entries has (pxar sorts only by
// hash).
func TestAnyOrder(t *testing.T) {
	root := &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}}
	file := &Metadata{Stat: Stat{Mode: ModeIFREG | 0o600, UID: 7, Mtime: Timestamp{Secs: 5, Nanos: 9}}}
	dir := &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o700}}
	names := []string{"manifest", "z", "b", "sub", "a", "m"}
	var meta bytes.Buffer
	e, err := NewEncoder(&meta, nil, root, WithAnyOrder())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == "sub" {
			if err := e.CreateDirectory(n, dir); err != nil {
				t.Fatal(err)
			}
			for _, c := range []string{"y", "x"} {
				if _, err := e.AddFile(c, file, 1, bytes.NewReader([]byte(c))); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.FinishDirectory(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := e.AddFile(n, file, uint64(len(n)), bytes.NewReader([]byte(n))); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := NewAccessor(ctx, bytes.NewReader(meta.Bytes()), int64(meta.Len()), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/manifest", "/z", "/b", "/a", "/m", "/sub/y", "/sub/x"} {
		f, err := a.LookupPath(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		r, _ := a.Open(ctx, f)
		got, _ := io.ReadAll(r)
		if want := p[len(p)-len(f.Name):]; string(got) != want || f.Metadata.Stat != file.Stat {
			t.Fatalf("%s: %q %+v", p, got, f.Metadata.Stat)
		}
	}
	stored := sortedNames(t, a, a.Root())
	if !slices.Equal(stored, names) {
		t.Fatalf("stored order %v, want %v", stored, names)
	}
}

// sortedNames lists dir with ReadDirSorted.
func sortedNames(t *testing.T, a *Accessor, dir *Entry) []string {
	t.Helper()
	ctx := context.Background()
	r, err := a.ReadDirSorted(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for {
		e, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name)
	}
}

// A repeated name is refused in any order, in the root and below, and
// the encoder stays usable; without WithAnyOrder order is enforced.
func TestAnyOrderDuplicate(t *testing.T) {
	root := &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}}
	file := &Metadata{Stat: Stat{Mode: ModeIFREG | 0o600}}
	dir := &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o700}}
	e, err := NewEncoder(io.Discard, nil, root, WithAnyOrder())
	if err != nil {
		t.Fatal(err)
	}
	add := func(n string) error { _, err := e.AddFile(n, file, 0, bytes.NewReader(nil)); return err }
	for _, n := range []string{"b", "a"} {
		if err := add(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := add("b"); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("repeated file: %v", err)
	}
	if err := e.CreateDirectory("a", dir); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("directory named like a file: %v", err)
	}
	if err := e.CreateDirectory("d", dir); err != nil {
		t.Fatal(err)
	}
	if err := add("b"); err != nil { // another directory: allowed
		t.Fatal(err)
	}
	if err := e.AddSymlink("b", &Metadata{Stat: Stat{Mode: ModeIFLNK | 0o777}}, "x"); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("repeated symlink: %v", err)
	}
	if err := e.FinishDirectory(); err != nil {
		t.Fatal(err)
	}
	if err := add("d"); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("file named like a directory: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	sorted, _ := NewEncoder(io.Discard, nil, root)
	if _, err := sorted.AddFile("b", file, 0, bytes.NewReader(nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := sorted.AddFile("a", file, 0, bytes.NewReader(nil)); !errors.Is(err, ErrOrder) {
		t.Fatalf("unsorted without WithAnyOrder: %v", err)
	}
}

// The copy buffer changes nothing in the output, whatever its size; an
// empty one is refused.
func TestWithCopyBuffer(t *testing.T) {
	root := &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}}
	file := &Metadata{Stat: Stat{Mode: ModeIFREG | 0o600}}
	content := bytes.Repeat([]byte("0123456789abcdef"), 5000)
	encode := func(opts ...EncoderOption) []byte {
		var meta, payload bytes.Buffer
		e, err := NewEncoder(&meta, &payload, root, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if _, err := e.AddFile(fmt.Sprint(i), file, uint64(len(content)-i), bytes.NewReader(content)); err != nil {
				t.Fatal(err)
			}
		}
		// a short reader: zero-filled through the caller's buffer too
		if _, err := e.AddFile("short", file, 100, bytes.NewReader(content[:10])); err == nil {
			t.Fatal("short content accepted")
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		return append(meta.Bytes(), payload.Bytes()...)
	}
	want := encode()
	for _, n := range []int{1, 7, 4096, 1 << 20} {
		if got := encode(WithCopyBuffer(make([]byte, n))); !bytes.Equal(got, want) {
			t.Errorf("copy buffer of %d bytes: output differs", n)
		}
	}
	if _, err := NewEncoder(io.Discard, nil, root, WithCopyBuffer(nil)); !errors.Is(err, ErrState) {
		t.Fatalf("empty copy buffer: %v", err)
	}
}

// GoodbyeTable rebuilds the GOODBYE item the encoder wrote, from the
// entries' offsets and sizes, so a front-to-back reader can check it.
func TestGoodbyeTable(t *testing.T) {
	root := &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}}
	file := &Metadata{Stat: Stat{Mode: ModeIFREG | 0o600}}
	for _, n := range []int{0, 1, 2, 5, 17, 100} {
		var meta bytes.Buffer
		e, _ := NewEncoder(&meta, nil, root, WithAnyOrder())
		var tab GoodbyeTable
		for i := range n {
			name := fmt.Sprintf("f%d", n-i)
			start := e.MetadataPosition()
			if _, err := e.AddFile(name, file, uint64(i), bytes.NewReader(make([]byte, i))); err != nil {
				t.Fatal(err)
			}
			tab.Add(name, start, e.MetadataPosition()-start)
		}
		gbOfs := e.MetadataPosition()
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		got := tab.Encode(0, gbOfs)
		if tab.Len() != n || !bytes.Equal(got, meta.Bytes()[gbOfs:]) {
			t.Fatalf("%d entries: table differs:\n got %x\nwant %x", n, got, meta.Bytes()[gbOfs:])
		}
		if !bytes.Equal(tab.Encode(0, gbOfs), got) {
			t.Fatalf("%d entries: Encode is not repeatable", n)
		}
	}
}

// DecodeEntry reads both ENTRY layouts and refuses other items and sizes.
func TestDecodeEntry(t *testing.T) {
	st := Stat{Mode: ModeIFREG | 0o4755, Flags: 3, UID: 1 << 31, GID: 9, Mtime: Timestamp{Secs: -5, Nanos: 7}}
	b := stat40(st.Mode, st.UID, st.GID, st.Mtime.Secs, st.Mtime.Nanos)
	le.PutUint64(b[8:], st.Flags)
	if got, ok := DecodeEntry(TypeEntry, b); !ok || got != st {
		t.Fatalf("ENTRY: %+v %v", got, ok)
	}
	v1 := append(slices.Clone(b[:24]), u64s(1_700_000_000_123456789)...)
	want := st
	want.Mtime = Timestamp{Secs: 1_700_000_000, Nanos: 123456789}
	if got, ok := DecodeEntry(TypeEntryV1, v1); !ok || got != want {
		t.Fatalf("ENTRY_V1: %+v %v", got, ok)
	}
	for name, c := range map[string]struct {
		typ uint64
		b   []byte
	}{
		"ENTRY short":      {TypeEntry, b[:39]},
		"ENTRY long":       {TypeEntry, append(slices.Clone(b), 0)},
		"ENTRY of V1 size": {TypeEntry, v1},
		"V1 of ENTRY size": {TypeEntryV1, b},
		"other item":       {TypeFilename, b},
		"empty":            {TypeEntry, nil},
	} {
		if got, ok := DecodeEntry(c.typ, c.b); ok {
			t.Errorf("%s accepted: %+v", name, got)
		}
	}
}
