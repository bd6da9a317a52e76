package walk

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
)

// TestWalkReuse lets a ReuseFunc store two files itself: they are never
// handed to the File hook, their hard links point at what the hook
// stored, and the others are read as usual.
func TestWalkReuse(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root+"/a", "from disk a")
	writeFile(t, root+"/b", "from disk b")
	writeFile(t, root+"/d/c", "from disk c")
	must(t, os.Link(root+"/d/c", root+"/e-link"))
	reuse := func(ctx context.Context, enc *pxar.Encoder, c *Candidate) (pxar.LinkOffset, bool, error) {
		if c.Name == "b" {
			return 0, false, nil
		}
		m := pxar.Metadata{Stat: pxar.Stat{Mode: uint64(c.Stat.Mode), UID: c.Stat.Uid, GID: c.Stat.Gid}}
		data := "reused " + c.Path
		off, err := enc.AddFile(c.Name, &m, uint64(len(data)), bytes.NewReader([]byte(data)))
		return off, true, err
	}
	var read []string
	file := func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
		read = append(read, f.Path)
		return CopyFile(ctx, enc, f)
	}
	a, st, _, _ := walkTo(t, root, true, Options{Reuse: reuse, File: file})
	if len(read) != 1 || read[0] != "b" || st.Reused != 2 || st.Files != 3 || st.Hardlinks != 1 {
		t.Fatalf("read %q, stats %+v", read, st)
	}
	ctx := context.Background()
	for path, want := range map[string]string{"a": "reused a", "b": "from disk b", "d/c": "reused d/c", "e-link": "reused d/c"} {
		e, err := a.LookupPath(ctx, path)
		must(t, err)
		r, err := a.Open(ctx, e)
		must(t, err)
		got, _ := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		if string(got) != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}

// TestWalkFinish places the payload of referenced files only when the
// walk finishes, as an incremental backup does with undecided runs.
func TestWalkFinish(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root+"/a", "first")
	writeFile(t, root+"/d/b", "second")
	var pb bytes.Buffer
	var deferred [][]byte
	reuse := func(ctx context.Context, enc *pxar.Encoder, c *Candidate) (pxar.LinkOffset, bool, error) {
		data, err := os.ReadFile(root + "/" + c.Path)
		if err != nil {
			return 0, false, err
		}
		at := enc.PayloadPosition()
		for _, d := range deferred {
			at += uint64(len(d))
		}
		item := binary.LittleEndian.AppendUint64(nil, pxar.TypePayload)
		item = binary.LittleEndian.AppendUint64(item, uint64(pxar.HeaderSize+len(data)))
		deferred = append(deferred, append(item, data...))
		m := pxar.Metadata{Stat: pxar.Stat{Mode: uint64(c.Stat.Mode)}}
		off, err := enc.AddFileRef(c.Name, &m, at, uint64(len(data)))
		return off, true, err
	}
	finished := 0
	finish := func(ctx context.Context, enc *pxar.Encoder) error {
		finished++
		if enc.Depth() != 1 {
			t.Errorf("finish at depth %d", enc.Depth())
		}
		for _, d := range deferred {
			pb.Write(d)
			if err := enc.AdvancePayload(uint64(len(d))); err != nil {
				return err
			}
		}
		return nil
	}
	var mb bytes.Buffer
	_, err := Walk(context.Background(), root, &mb, &pb, Options{Reuse: reuse, Finish: finish})
	must(t, err)
	a, err := pxar.NewAccessor(context.Background(), bytes.NewReader(mb.Bytes()), int64(mb.Len()), bytes.NewReader(pb.Bytes()), int64(pb.Len()))
	must(t, err)
	if finished != 1 {
		t.Fatalf("finish called %d times", finished)
	}
	for path, want := range map[string]string{"a": "first", "d/b": "second"} {
		e, err := a.LookupPath(context.Background(), path)
		must(t, err)
		r, err := a.Open(context.Background(), e)
		must(t, err)
		got, _ := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		if string(got) != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
