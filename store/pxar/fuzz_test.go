package pxar

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"
)

// FuzzAccessor decodes arbitrary metadata and payload streams: it must
// never panic or read outside them, every failure must be a corruption
// error (or a missing payload stream), and a root that lists names each
// entry once.
func FuzzAccessor(f *testing.F) {
	for _, split := range []bool{true, false} {
		t := &testing.T{}
		meta, payload := smallArchive(t, split)
		f.Add(meta, payload)
		small := dirNode("",
			fileNode("a", []byte("x")),
			&node{name: "l", kind: KindSymlink, target: "a", meta: Metadata{Stat: Stat{Mode: ModeIFLNK | 0o777}}},
			&node{name: "p", kind: KindFIFO, meta: Metadata{Stat: Stat{Mode: ModeIFIFO | 0o600}}},
		)
		g, q := uint64(4), uint64(9)
		small.children[0].meta = Metadata{
			Stat:   small.children[0].meta.Stat,
			Xattrs: []Xattr{{Name: []byte("user.x"), Value: []byte("y")}},
			ACL: ACL{Users: []ACLEntry{{ID: 1, Perm: 7}}, Groups: []ACLEntry{{ID: 2, Perm: 5}}, GroupObj: &g,
				Default: &ACLDefault{7, 5, 0, ACLNoMask}, DefaultUsers: []ACLEntry{{ID: 3, Perm: 1}}},
			FCaps:          []byte{1, 2},
			QuotaProjectID: &q,
		}
		small.children = append(small.children, &node{name: "z", kind: KindDevice, dev: Device{Major: 8, Minor: 1},
			meta: Metadata{Stat: Stat{Mode: ModeIFBLK | 0o600}}})
		meta, payload = encodeTree(t, small, split)
		f.Add(meta, payload)
	}
	f.Fuzz(func(t *testing.T, meta, payload []byte) {
		if len(payload) == 0 {
			payload = nil
		}
		err := walkAll(meta, payload, 2000)
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNoPayload) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if a, err := NewAccessor(context.Background(), bytes.NewReader(meta), int64(len(meta)), nil, 0); err == nil {
			checkListing(t, a)
		}
	})
}

// rootTable splits a single-directory archive at its root goodbye table:
// everything before the GOODBYE item and the table items without the
// tail.
func rootTable(meta []byte) (prefix, items []byte) {
	size := le.Uint64(meta[len(meta)-8:])
	gb := len(meta) - int(size)
	return meta[:gb], meta[gb+HeaderSize : len(meta)-GoodbyeItemSize]
}

// withTable puts a root goodbye table of the given items (cut to whole
// items) after prefix.
func withTable(prefix, items []byte) []byte {
	items = items[:len(items)/GoodbyeItemSize*GoodbyeItemSize]
	size := uint64(HeaderSize + len(items) + GoodbyeItemSize)
	b := appendItem(bytes.Clone(prefix), TypeGoodbye, items)
	b = le.AppendUint64(b, GoodbyeTailMarker)
	b = le.AppendUint64(b, uint64(len(prefix)))
	b = le.AppendUint64(b, size)
	le.PutUint64(b[len(prefix)+8:], size)
	return b
}

// FuzzGoodbyeTable replaces the root goodbye table of real archives (one
// from the encoder, one crafted with a name twice) with arbitrary items:
// never a panic, only corruption errors, and a directory that lists
// without error names each entry once, and Lookup finds each of them.
func FuzzGoodbyeTable(f *testing.F) {
	t := &testing.T{}
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	var kids []*node
	for _, n := range names {
		kids = append(kids, fileNode(n, []byte(n)))
	}
	kids = append(kids, dirNode("sub", fileNode("x", nil)))
	real, _ := encodeTree(t, dirNode("", kids...), false)
	dup := craftArchive(append(files(names...), files("c")...), craftOpts{})
	bases := [][]byte{real, dup}
	for i, b := range bases {
		_, items := rootTable(b)
		f.Add(uint8(i), items)
		f.Add(uint8(i), items[:len(items)/2])
		f.Add(uint8(i), append(bytes.Clone(items), items[:GoodbyeItemSize]...)) // an entry twice
		f.Add(uint8(i), []byte{})                                               // an empty directory
	}
	f.Fuzz(func(t *testing.T, base uint8, items []byte) {
		prefix, _ := rootTable(bases[int(base)%len(bases)])
		meta := withTable(prefix, items)
		a, err := NewAccessor(context.Background(), bytes.NewReader(meta), int64(len(meta)), nil, 0)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open: %v", err)
			}
			return
		}
		checkListing(t, a)
	})
}

// checkListing lists the root; if that succeeds, every name must be
// listed once and Lookup must return the same entry for it, a name not
// listed must not be found, and a listing resumed at each entry's
// position (Seek) goes on with that entry.
func checkListing(t *testing.T, a *Accessor) {
	ctx := context.Background()
	r, err := a.ReadDirSorted(ctx, a.Root())
	var listed []*Entry
	var pos []uint64
	for err == nil {
		p := r.Pos()
		var e *Entry
		if e, err = r.Next(ctx); err == nil {
			listed, pos = append(listed, e), append(pos, p)
		}
	}
	if err != io.EOF {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("list: %v", err)
		}
		checkGoesOn(t, a)
		return
	}
	if _, err := a.Lookup(ctx, a.Root(), "not-listed\x01"); !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("lookup of a name not listed: %v", err)
	}
	seen := map[string]bool{}
	for _, e := range listed {
		if seen[e.Name] {
			t.Fatalf("%q listed twice", e.Name)
		}
		seen[e.Name] = true
		got, err := a.Lookup(ctx, a.Root(), e.Name)
		if err != nil || got.ID != e.ID {
			t.Fatalf("lookup %q after listing it: %v", e.Name, err)
		}
	}
	checkSeeks(t, a, listed, pos)
}

// checkGoesOn lists the root going on after errors: every call moves
// past an entry (the table's count bounds them) until io.EOF or an error
// that ends the listing, which every later call returns.
func checkGoesOn(t *testing.T, a *Accessor) {
	ctx := context.Background()
	r, err := a.ReadDirSorted(ctx, a.Root())
	if err != nil {
		t.Fatal(err)
	}
	for calls := 0; ; calls++ {
		if calls > r.Len()+1 {
			t.Fatalf("%d calls of Next for %d entries", calls, r.Len())
		}
		_, err := r.Next(ctx)
		switch {
		case err == io.EOF:
			return
		case err != nil && !errors.Is(err, ErrCorrupt):
			t.Fatalf("list: %v", err)
		case r.Err() != nil:
			if _, again := r.Next(ctx); again != r.Err() || err != r.Err() {
				t.Fatalf("listing ended with %v, then %v (Err %v)", err, again, r.Err())
			}
			return
		}
	}
}

// checkSeeks resumes listings of the root at the positions of its
// entries, and at the byte after each: the one must go on with the
// entry, the other fail with ErrPosition unless it is a position too.
func checkSeeks(t *testing.T, a *Accessor, listed []*Entry, pos []uint64) {
	ctx := context.Background()
	for k, p := range pos {
		r, err := a.ReadDirSorted(ctx, a.Root())
		if err == nil {
			err = r.Seek(ctx, p)
		}
		var e *Entry
		if err == nil {
			e, err = r.Next(ctx)
		}
		if err != nil || e.ID != listed[k].ID {
			t.Fatalf("listing resumed at %q (%d): %v", listed[k].Name, p, err)
		}
		if slices.Contains(pos, p+1) {
			continue
		}
		if err := r.Seek(ctx, p+1); !errors.Is(err, ErrPosition) {
			t.Fatalf("seek into %q (%d): %v", listed[k].Name, p+1, err)
		}
	}
}

// oneEntry is an archive whose root holds one entry "f" of the given
// body (the bytes after its FILENAME item).
func oneEntry(body []byte) []byte {
	b := appendMetadata(nil, &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}})
	fileOfs := len(b)
	b = appendItem(b, TypeFilename, []byte("f\x00"))
	b = append(b, body...)
	gb := uint64(len(b))
	items := le.AppendUint64(nil, HashFilename("f"))
	items = le.AppendUint64(items, gb-uint64(fileOfs))
	items = le.AppendUint64(items, gb-uint64(fileOfs))
	return withTable(b, items)
}

// entryBody encodes e's metadata and content item as the encoder does.
func entryBody(e *Entry, content []byte) []byte {
	b := appendMetadata(nil, &e.Metadata)
	switch e.Kind {
	case KindFile:
		b = appendItem(b, TypePayload, content)
	case KindSymlink:
		b = appendItem(b, TypeSymlink, []byte(e.Target), []byte{0})
	case KindDevice:
		b = appendU64Item(b, TypeDevice, e.Device.Major, e.Device.Minor)
	}
	return b
}

// FuzzEntry decodes arbitrary entry bodies (ENTRY, attribute and content
// items; seeds from the encoder's own encoding): only corruption errors,
// and an entry that decodes encodes back to an equal one.
func FuzzEntry(f *testing.F) {
	g, q := uint64(4), uint64(9)
	rich := Metadata{Stat: Stat{Mode: ModeIFREG | 0o640, UID: 1, GID: 2, Mtime: Timestamp{1700000000, 5}},
		Xattrs: []Xattr{{Name: []byte("user.x"), Value: []byte("y")}},
		ACL: ACL{Users: []ACLEntry{{ID: 1, Perm: 7}}, Groups: []ACLEntry{{ID: 2, Perm: 5}}, GroupObj: &g,
			Default: &ACLDefault{7, 5, 0, ACLNoMask}, DefaultUsers: []ACLEntry{{ID: 3, Perm: 1}}, DefaultGroups: []ACLEntry{{ID: 4, Perm: 2}}},
		FCaps: []byte{1, 2}, QuotaProjectID: &q}
	seeds := []*Entry{
		{Kind: KindFile, Metadata: rich},
		{Kind: KindSymlink, Target: "../t", Metadata: Metadata{Stat: Stat{Mode: ModeIFLNK | 0o777}}},
		{Kind: KindDevice, Device: Device{8, 1}, Metadata: Metadata{Stat: Stat{Mode: ModeIFCHR | 0o600}}},
		{Kind: KindFIFO, Metadata: Metadata{Stat: Stat{Mode: ModeIFIFO | 0o600}}},
		{Kind: KindSocket, Metadata: Metadata{Stat: Stat{Mode: ModeIFSOCK | 0o600}}},
	}
	for _, e := range seeds {
		f.Add(entryBody(e, []byte("content")))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		meta := oneEntry(body)
		e, content, err := decodeOne(meta)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode: %v", err)
			}
			return
		}
		if e.Kind == KindDir {
			return // its body is a directory's content: FuzzAccessor's part
		}
		again, content2, err := decodeOne(oneEntry(entryBody(e, content)))
		if err != nil {
			t.Fatalf("re-encoded entry fails: %v", err)
		}
		if !again.Metadata.Equal(&e.Metadata) || again.Kind != e.Kind || again.Target != e.Target ||
			again.Device != e.Device || !bytes.Equal(content, content2) {
			t.Fatalf("round trip: %+v became %+v", e, again)
		}
	})
}

// decodeOne looks up "f" in an archive from oneEntry and reads a file's
// content.
func decodeOne(meta []byte) (*Entry, []byte, error) {
	ctx := context.Background()
	a, err := NewAccessor(ctx, bytes.NewReader(meta), int64(len(meta)), nil, 0)
	if err != nil {
		return nil, nil, err
	}
	e, err := a.Lookup(ctx, a.Root(), "f")
	if err != nil || e.Kind != KindFile {
		return e, nil, err
	}
	r, err := a.Open(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	content, err := io.ReadAll(r)
	return e, content, err
}
