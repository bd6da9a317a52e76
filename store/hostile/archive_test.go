package hostile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
)

// encodeWithEncoder writes a tree that the Encoder accepts (sorted,
// unique, valid names) with the Encoder.
func encodeWithEncoder(t *testing.T, root *Node) (meta, payload []byte) {
	t.Helper()
	var mb, pb bytes.Buffer
	md := func(n *Node) *pxar.Metadata {
		return &pxar.Metadata{Stat: pxar.Stat{Mode: n.typeBits() | n.Mode, UID: n.UID, GID: n.GID, Mtime: pxar.Timestamp{Secs: n.Mtime}}}
	}
	enc, err := pxar.NewEncoder(&mb, &pb, md(root))
	if err != nil {
		t.Fatal(err)
	}
	offsets := map[*Node]pxar.LinkOffset{}
	var add func(d *Node)
	add = func(d *Node) {
		for _, n := range d.Kids {
			var err error
			switch {
			case n.Kind == pxar.KindDir:
				if err = enc.CreateDirectory(n.Name, md(n)); err == nil {
					add(n)
					err = enc.FinishDirectory()
				}
			case n.LinkTo != nil:
				err = enc.AddHardlink(n.Name, n.Link, offsets[n.LinkTo])
			case n.Kind == pxar.KindFile:
				offsets[n], err = enc.AddFile(n.Name, md(n), uint64(len(n.Data)), bytes.NewReader(n.Data))
			case n.Kind == pxar.KindSymlink:
				err = enc.AddSymlink(n.Name, md(n), n.Target)
			case n.Kind == pxar.KindDevice:
				err = enc.AddDevice(n.Name, md(n), n.Dev)
			case n.Kind == pxar.KindFIFO:
				err = enc.AddFIFO(n.Name, md(n))
			case n.Kind == pxar.KindSocket:
				err = enc.AddSocket(n.Name, md(n))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	add(root)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return mb.Bytes(), pb.Bytes()
}

// TestEncodeMatchesEncoder: for a tree the Encoder accepts, Encode writes
// the same bytes, so what the tricks change is only the trick.
func TestEncodeMatchesEncoder(t *testing.T) {
	data := File("data", strings.Repeat("x", 5000))
	data.UID, data.Mtime = 1000, 1_600_000_000
	root := Dir("", Symlink("a-link", "/elsewhere"), Dir("b-dir", File("f", "1"), Dir("sub", dev("null", 1, 3, false))),
		data, &Node{Name: "fifo", Kind: pxar.KindFIFO, Mode: 0o600}, Hardlink("z-link", "data", data))
	wantMeta, wantPayload := encodeWithEncoder(t, root)
	meta, payload := Encode(root)
	if !bytes.Equal(meta, wantMeta) || !bytes.Equal(payload, wantPayload) {
		t.Fatalf("Encode differs from the Encoder: meta %d/%d bytes, payload %d/%d bytes",
			len(meta), len(wantMeta), len(payload), len(wantPayload))
	}
}

// TestTricksDecode: every trick is an archive the decoder opens, and
// listing it all either works or fails with a corruption error: the
// tricks reach the reader's logic, not just its framing checks.
func TestTricksDecode(t *testing.T) {
	ctx := context.Background()
	tricks := Tricks("/outside")
	tricks = append(tricks, Trick{"random", Random(1, "/outside")})
	for _, tr := range tricks {
		meta, payload := Encode(tr.Root)
		acc, err := pxar.NewAccessor(ctx, bytes.NewReader(meta), int64(len(meta)), bytes.NewReader(payload), int64(len(payload)))
		if err != nil {
			t.Fatalf("%s: %v", tr.Name, err)
		}
		if err := listAll(ctx, acc, acc.Root()); err != nil && !errors.Is(err, pxar.ErrCorrupt) {
			t.Fatalf("%s: %v", tr.Name, err)
		}
	}
	// the symlink-then-directory trick keeps both entries named "a" in
	// the root's goodbye table (its size is in the tail item)
	meta, _ := Encode(Tricks("/outside")[0].Root)
	size := binary.LittleEndian.Uint64(meta[len(meta)-8:])
	if n := (size-pxar.HeaderSize)/pxar.GoodbyeItemSize - 1; n != 2 {
		t.Fatalf("root of the first trick: %d entries, want 2", n)
	}
}

func listAll(ctx context.Context, acc *pxar.Accessor, d *pxar.Entry) error {
	r, err := acc.ReadDirSorted(ctx, d)
	if err != nil {
		return err
	}
	for {
		e, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if e.IsDir() {
			if err := listAll(ctx, acc, e); err != nil {
				return err
			}
		}
	}
}
