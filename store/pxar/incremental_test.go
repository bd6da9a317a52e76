package pxar

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// TestPayloadReuse writes a second archive that references the first
// one's payload for an unchanged file: AddFileRef at the payload
// position, then the caller copies the old PAYLOAD item into the payload
// stream and advances past it.
func TestPayloadReuse(t *testing.T) {
	ctx := context.Background()
	tree := dirNode("", fileNode("changed", []byte("old")), fileNode("same", bytes.Repeat([]byte("s"), 5000)))
	meta1, payload1 := encodeTree(t, tree, true)
	prev := openArchive(t, meta1, payload1)

	var mb, pb bytes.Buffer
	e, err := NewEncoder(&mb, &pb, &tree.meta)
	if err != nil {
		t.Fatal(err)
	}
	changed := tree.children[0]
	if _, err := e.AddFile("changed", &changed.meta, 3, bytes.NewReader([]byte("new"))); err != nil {
		t.Fatal(err)
	}
	old, err := prev.LookupPath(ctx, "same")
	if err != nil {
		t.Fatal(err)
	}
	oldOfs, ok := old.PayloadRef()
	if !ok {
		t.Fatal("no payload reference in a split archive")
	}
	at := e.PayloadPosition()
	if _, err := e.AddFileRef("same", &old.Metadata, at, old.Size); err != nil {
		t.Fatal(err)
	}
	pb.Write(payload1[oldOfs : oldOfs+HeaderSize+old.Size])
	if err := e.AdvancePayload(HeaderSize + old.Size); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	a := openArchive(t, mb.Bytes(), pb.Bytes())
	for name, want := range map[string]string{"changed": "new", "same": string(tree.children[1].data)} {
		ent, err := a.LookupPath(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := a.Open(ctx, ent)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		if string(got) != want {
			t.Errorf("%s: %d bytes, want %d", name, len(got), len(want))
		}
	}
	if err := walkAll(mb.Bytes(), pb.Bytes(), 100); err != nil {
		t.Fatal(err)
	}
}
