package pxar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
)

// countingReader counts ReadAt calls and bytes.
type countingReader struct {
	r            io.ReaderAt
	calls, bytes atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.calls.Add(1)
	c.bytes.Add(int64(len(p)))
	return c.r.ReadAt(p, off)
}

func (c *countingReader) reset() { c.calls.Store(0); c.bytes.Store(0) }

// bigDir encodes a root directory of n empty files into a split archive.
func bigDir(t testing.TB, n int) (meta, payload []byte) {
	t.Helper()
	var mb, pb bytes.Buffer
	root := Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}}
	file := Metadata{Stat: Stat{Mode: ModeIFREG | 0o644}}
	e, err := NewEncoder(&mb, &pb, &root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := e.AddFile(fmt.Sprintf("file-%07d", i), &file, 0, bytes.NewReader(nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return mb.Bytes(), pb.Bytes()
}

func TestLookupLargeDirectory(t *testing.T) {
	const n = 100_000
	meta, payload := bigDir(t, n)
	cr := &countingReader{r: bytes.NewReader(meta)}
	ctx := context.Background()
	a, err := NewAccessor(ctx, cr, int64(len(meta)), bytes.NewReader(payload), int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	if a.Root().Len() != n {
		t.Fatalf("root has %d entries, want %d", a.Root().Len(), n)
	}
	for i := 0; i < n; i += 997 {
		name := fmt.Sprintf("file-%07d", i)
		cr.reset()
		e, err := a.Lookup(ctx, a.Root(), name)
		if err != nil || e.Name != name || e.Kind != KindFile {
			t.Fatalf("lookup %s: %+v %v", name, e, err)
		}
		// log2(100000) ≈ 17 tree levels, one read each past the prefix,
		// plus the prefix and the entry: never a scan of the table.
		if calls, b := cr.calls.Load(), cr.bytes.Load(); calls > 20 || b > 4096 {
			t.Fatalf("lookup %s: %d reads, %d bytes", name, calls, b)
		}
	}
	for _, name := range []string{"file-", "file-0100000", "zzz", "a"} {
		if _, err := a.Lookup(ctx, a.Root(), name); !errors.Is(err, ErrNotFound) {
			t.Errorf("lookup %q: %v", name, err)
		}
	}
	// Listing streams: all names once, reading the table in batches.
	r, _ := a.ReadDir(a.Root())
	seen := make(map[string]bool, n)
	for {
		e, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[e.Name] = true
	}
	if len(seen) != n {
		t.Errorf("listed %d distinct names, want %d", len(seen), n)
	}
}

// deepArchive nests depth directories, each with siblings, ending in a file.
func deepArchive(t testing.TB, depth, siblings int) ([]byte, []byte, string) {
	t.Helper()
	leaf := fileNode("leaf", []byte("deep content"))
	n := leaf
	path := "leaf"
	for d := depth; d > 0; d-- {
		kids := []*node{n}
		for s := range siblings {
			kids = append(kids, fileNode(fmt.Sprintf("sib%03d", s), []byte("s")))
		}
		name := fmt.Sprintf("d%02d", d)
		n = dirNode(name, kids...)
		path = name + "/" + path
	}
	meta, payload := encodeTree(t, dirNode("", n), true)
	return meta, payload, path
}

// Looking up a path 10 directories deep reads O(depth) small regions.
func TestLookupDeepReads(t *testing.T) {
	meta, payload, path := deepArchive(t, 10, 50)
	cr := &countingReader{r: bytes.NewReader(meta)}
	ctx := context.Background()
	a, err := NewAccessor(ctx, cr, int64(len(meta)), bytes.NewReader(payload), int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	cr.reset()
	e, err := a.LookupPath(ctx, path)
	if err != nil || e.Kind != KindFile {
		t.Fatalf("%s: %+v %v", path, e, err)
	}
	// Per level: table prefix, one or two deeper table items, the entry,
	// and the subdirectory's goodbye tail and header.
	calls, b := cr.calls.Load(), cr.bytes.Load()
	if calls > 11*7 || b > 11*3000 {
		t.Errorf("depth-11 lookup: %d reads, %d bytes of %d", calls, b, len(meta))
	}
	t.Logf("depth-11 lookup: %d reads, %d bytes of a %d-byte archive", calls, b, len(meta))
}

func BenchmarkLookupDepth10(b *testing.B) { benchLookupPath(b, 10, 200) }

// benchLookupPath looks up the deepest path of deepArchive(depth, siblings).
func benchLookupPath(b *testing.B, depth, siblings int) {
	meta, payload, path := deepArchive(b, depth, siblings)
	a := openArchive(b, meta, payload)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.LookupPath(ctx, path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookup100k(b *testing.B) {
	meta, payload := bigDir(b, 100_000)
	a := openArchive(b, meta, payload)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		if _, err := a.Lookup(ctx, a.Root(), fmt.Sprintf("file-%07d", i%100_000)); err != nil {
			b.Fatal(err)
		}
		i += 7919
	}
}

func BenchmarkEncode(b *testing.B) {
	tree := richTree()
	var size int64
	for _, c := range tree.children {
		size += int64(len(c.data))
	}
	b.SetBytes(size)
	for b.Loop() {
		encodeTree(b, tree, true)
	}
}

func BenchmarkEncodeManySmallFiles(b *testing.B) {
	root := Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}}
	file := Metadata{Stat: Stat{Mode: ModeIFREG | 0o644}}
	data := bytes.Repeat([]byte("x"), 4096)
	names := make([]string, 10_000)
	for i := range names {
		names[i] = fmt.Sprintf("f%06d", i)
	}
	b.SetBytes(int64(len(names) * len(data)))
	for b.Loop() {
		e, err := NewEncoder(io.Discard, io.Discard, &root)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range names {
			if _, err := e.AddFile(n, &file, uint64(len(data)), bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
