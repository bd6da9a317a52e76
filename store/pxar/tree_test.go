package pxar

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// node is a test model of an archive entry.
type node struct {
	name     string
	kind     Kind
	meta     Metadata
	data     []byte
	target   string // symlink
	dev      Device
	linkTo   string // hard link: path of the target file
	children []*node
}

func dirNode(name string, children ...*node) *node {
	slices.SortFunc(children, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	return &node{name: name, kind: KindDir, meta: Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}}, children: children}
}

func fileNode(name string, data []byte) *node {
	return &node{name: name, kind: KindFile, data: data, meta: Metadata{Stat: Stat{Mode: ModeIFREG | 0o644, UID: 1, GID: 2, Mtime: Timestamp{1700000000, 123}}}}
}

// encodeTree writes root into an archive, split or not.
func encodeTree(t testing.TB, root *node, split bool) (meta, payload []byte) {
	t.Helper()
	var mb, pb bytes.Buffer
	var pw io.Writer
	if split {
		pw = &pb
	}
	e, err := NewEncoder(&mb, pw, &root.meta)
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]LinkOffset{}
	for _, c := range root.children {
		encodeNode(t, e, c, c.name, links)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if split {
		return mb.Bytes(), pb.Bytes()
	}
	return mb.Bytes(), nil
}

func encodeNode(t testing.TB, e *Encoder, n *node, path string, links map[string]LinkOffset) {
	t.Helper()
	var err error
	switch {
	case n.linkTo != "":
		err = e.AddHardlink(n.name, n.linkTo, links[n.linkTo])
	case n.kind == KindDir:
		if err = e.CreateDirectory(n.name, &n.meta); err != nil {
			break
		}
		for _, c := range n.children {
			encodeNode(t, e, c, path+"/"+c.name, links)
		}
		err = e.FinishDirectory()
	case n.kind == KindFile:
		links[path], err = e.AddFile(n.name, &n.meta, uint64(len(n.data)), bytes.NewReader(n.data))
	case n.kind == KindSymlink:
		err = e.AddSymlink(n.name, &n.meta, n.target)
	case n.kind == KindDevice:
		err = e.AddDevice(n.name, &n.meta, n.dev)
	case n.kind == KindFIFO:
		err = e.AddFIFO(n.name, &n.meta)
	case n.kind == KindSocket:
		err = e.AddSocket(n.name, &n.meta)
	}
	if err != nil {
		t.Fatalf("encoding %s: %v", path, err)
	}
}

func openArchive(t testing.TB, meta, payload []byte) *Accessor {
	t.Helper()
	var pr io.ReaderAt
	if payload != nil {
		pr = bytes.NewReader(payload)
	}
	a, err := NewAccessor(context.Background(), bytes.NewReader(meta), int64(len(meta)), pr, int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// checkTree compares the archive's directory dir with the model n, both by
// listing and by lookup; ids maps model paths to entry IDs.
func checkTree(t *testing.T, a *Accessor, dir *Entry, n *node, path string, ids map[string]uint64) {
	t.Helper()
	ctx := context.Background()
	r, err := a.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != len(n.children) {
		t.Errorf("%s: %d entries, want %d", path, r.Len(), len(n.children))
	}
	listed := map[string]*Entry{}
	for {
		e, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: listing: %v", path, err)
		}
		listed[e.Name] = e
	}
	for _, c := range n.children {
		cpath := path + "/" + c.name
		e, err := a.Lookup(ctx, dir, c.name)
		if err != nil {
			t.Errorf("lookup %q: %v", cpath, err)
			continue
		}
		if l := listed[c.name]; l == nil || l.ID != e.ID {
			t.Errorf("%q: listed entry %+v differs from looked-up %+v", cpath, l, e)
		}
		checkEntry(t, a, e, c, cpath, ids)
	}
}

func checkEntry(t *testing.T, a *Accessor, e *Entry, n *node, path string, ids map[string]uint64) {
	t.Helper()
	if n.linkTo != "" {
		if e.Hardlink != n.linkTo || e.ID != ids[n.linkTo] || e.Kind != KindFile {
			t.Errorf("%q: hard link resolved to %+v, want target %q id %d", path, e, n.linkTo, ids[n.linkTo])
		}
		return
	}
	ids[strings.TrimPrefix(path, "/")] = e.ID
	if e.Kind != n.kind || !e.Metadata.Equal(&n.meta) {
		t.Errorf("%q: got kind %v meta %+v, want %v %+v", path, e.Kind, e.Metadata, n.kind, n.meta)
	}
	switch n.kind {
	case KindDir:
		checkTree(t, a, e, n, path, ids)
	case KindFile:
		r, err := a.Open(context.Background(), e)
		if err != nil {
			t.Fatalf("%q: open: %v", path, err)
		}
		got, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		if err != nil || !bytes.Equal(got, n.data) {
			t.Errorf("%q: content %d bytes (%v), want %d", path, len(got), err, len(n.data))
		}
	case KindSymlink:
		if e.Target != n.target {
			t.Errorf("%q: target %q want %q", path, e.Target, n.target)
		}
	case KindDevice:
		if e.Device != n.dev {
			t.Errorf("%q: device %+v want %+v", path, e.Device, n.dev)
		}
	}
}

// richTree holds every entry kind, odd names and all metadata items.
func richTree() *node {
	u := uint64(7)
	g := uint64(5)
	rich := fileNode("rich", []byte("metadata"))
	rich.meta.Xattrs = []Xattr{{Name: []byte("user.a"), Value: []byte("1")}, {Name: []byte("user.b"), Value: nil}}
	rich.meta.ACL = ACL{Users: []ACLEntry{{ID: 1000, Perm: 6}}, Groups: []ACLEntry{{ID: 10, Perm: 4}}, GroupObj: &g}
	rich.meta.FCaps = []byte{1, 2, 3}
	rich.meta.QuotaProjectID = &u
	sub := dirNode("sub", fileNode("x", bytes.Repeat([]byte{0}, 1<<17)), &node{name: "y-link", linkTo: "f1"})
	sub.meta.ACL = ACL{Default: &ACLDefault{UserObj: 7, GroupObj: 5, Other: ACLNoMask, Mask: 5}, DefaultUsers: []ACLEntry{{ID: 3, Perm: 7}}, DefaultGroups: []ACLEntry{{ID: 4, Perm: 1}}}
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 3<<20+17)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	long := strings.Repeat("n", 255)
	return dirNode("",
		fileNode("f1", []byte("hello")),
		fileNode("empty", nil),
		fileNode("big", big),
		fileNode("with space", []byte("s")),
		fileNode("new\nline", []byte("n")),
		fileNode("bad\xff\xfeutf8", []byte("u")),
		fileNode(long, []byte("long")),
		rich,
		sub,
		dirNode("emptydir"),
		dirNode("deep", dirNode("a", dirNode("b", fileNode("c", []byte("deep"))))),
		&node{name: "sym", kind: KindSymlink, target: "../some/where", meta: Metadata{Stat: Stat{Mode: ModeIFLNK | 0o777}}},
		&node{name: "chr", kind: KindDevice, dev: Device{Major: 1, Minor: 3}, meta: Metadata{Stat: Stat{Mode: ModeIFCHR | 0o666}}},
		&node{name: "blk", kind: KindDevice, dev: Device{Major: 0xabcd1234, Minor: 0xdcba5678}, meta: Metadata{Stat: Stat{Mode: ModeIFBLK | 0o660}}},
		&node{name: "fifo", kind: KindFIFO, meta: Metadata{Stat: Stat{Mode: ModeIFIFO | 0o600}}},
		&node{name: "sock", kind: KindSocket, meta: Metadata{Stat: Stat{Mode: ModeIFSOCK | 0o755}}},
		&node{name: "zz-link", linkTo: "sub/x"},
	)
}

func TestRoundTrip(t *testing.T) {
	for _, split := range []bool{true, false} {
		t.Run(fmt.Sprintf("split=%v", split), func(t *testing.T) {
			tree := richTree()
			meta, payload := encodeTree(t, tree, split)
			a := openArchive(t, meta, payload)
			if a.Root().Kind != KindDir || a.Root().ID != 0 {
				t.Fatalf("root %+v", a.Root())
			}
			wantVersion := 1
			if split {
				wantVersion = 2
			}
			if a.Version() != wantVersion {
				t.Errorf("version %d want %d", a.Version(), wantVersion)
			}
			checkTree(t, a, a.Root(), tree, "", map[string]uint64{})
		})
	}
}

func TestLookupPath(t *testing.T) {
	meta, payload := encodeTree(t, richTree(), true)
	a := openArchive(t, meta, payload)
	ctx := context.Background()
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"deep/a/b/c", true}, {"/deep//a/./b/c", true}, {"", true}, {"/", true},
		{"deep/a/x", false}, {"f1/x", false}, {"deep/../f1", false}, {"nothere", false},
	} {
		e, err := a.LookupPath(ctx, c.path)
		if (err == nil) != c.ok {
			t.Errorf("LookupPath(%q) = %+v, %v", c.path, e, err)
		}
	}
}
