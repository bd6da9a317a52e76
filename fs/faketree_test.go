package fs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/store"
)

// treeFixture is the archive stream of the test file archive: the text
// of testdata/tree.txt, which the fake tree parses back.
func treeFixture() []byte {
	data, err := os.ReadFile("testdata/tree.txt")
	if err != nil {
		panic(err) // the fixture is part of the package
	}
	return data
}

// fakeOpener opens the test file archives: it reads the stream through
// the mount's StreamOpener and parses it as testdata/tree.txt's format.
type fakeOpener struct{}

var _ TreeOpener = fakeOpener{}

func (fakeOpener) OpenTree(ctx context.Context, a store.Archive, streams StreamOpener) (ArchiveTree, error) {
	st, err := streams(ctx, a.Files[0])
	if err != nil {
		return nil, err
	}
	defer st.Close()
	data := make([]byte, st.Size())
	if _, err := st.ReadAtContext(ctx, data, 0); err != nil {
		return nil, err
	}
	return parseFakeTree(data)
}

// fakeNode is one entry of the fake tree.
type fakeNode struct {
	e       TreeEntry
	content []byte
	target  string
	xattrs  []Xattr
	kids    []string
}

// fakeTree is an in-memory ArchiveTree; an entry's Ref is 1 + the index
// of its path in paths.
type fakeTree struct {
	nodes map[string]*fakeNode
	paths []string
}

func (t *fakeTree) refOf(p string) TreeRef {
	t.paths = append(t.paths, p)
	return TreeRef{uint64(len(t.paths))}
}

// pathOf is the path of ref; "" for a ref of no entry.
func (t *fakeTree) pathOf(ref TreeRef) string {
	if i := ref[0]; i >= 1 && i <= uint64(len(t.paths)) {
		return t.paths[i-1]
	}
	return ""
}

var _ ArchiveTree = (*fakeTree)(nil)

func parseFakeTree(data []byte) (*fakeTree, error) {
	t := &fakeTree{nodes: map[string]*fakeNode{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		n, err := t.parseLine(uint64(line), f)
		if err != nil {
			return nil, fmt.Errorf("tree line %d: %w", line, err)
		}
		t.nodes[f[0]] = n
		if f[0] != "/" {
			p := t.nodes[path.Dir(f[0])]
			p.kids = append(p.kids, f[0])
		}
	}
	return t, nil
}

func (t *fakeTree) parseLine(id uint64, f []string) (*fakeNode, error) {
	if len(f) < 6 {
		return nil, fmt.Errorf("want PATH TYPE MODE UID GID MTIME, got %q", f)
	}
	mode, err1 := strconv.ParseUint(f[2], 8, 32)
	uid, err2 := strconv.ParseUint(f[3], 10, 32)
	gid, err3 := strconv.ParseUint(f[4], 10, 32)
	mtime, err4 := strconv.ParseInt(f[5], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return nil, fmt.Errorf("bad number in %q", f)
	}
	n := &fakeNode{e: TreeEntry{ID: id, Name: path.Base(f[0]), Mode: uint32(mode), UID: uint32(uid), GID: uint32(gid),
		Mtime: time.Unix(mtime, 0), Ref: t.refOf(f[0])}}
	rest := f[6:]
	switch f[1] {
	case "d":
		n.e.Mode |= syscall.S_IFDIR
	case "f":
		n.e.Mode |= syscall.S_IFREG
		c, err := fakeContent(rest[0])
		if err != nil {
			return nil, err
		}
		n.content, rest = c, rest[1:]
		n.e.Size = uint64(len(c))
	case "l":
		n.e.Mode |= syscall.S_IFLNK
		n.target, rest = rest[0], rest[1:]
		n.e.Size = uint64(len(n.target))
	case "h":
		target, ok := t.nodes[rest[0]]
		if !ok {
			return nil, fmt.Errorf("hard link to unknown %s", rest[0])
		}
		c := *target
		c.e.Name, c.e.Nlink = path.Base(f[0]), 2
		target.e.Nlink = 2
		return &c, nil
	case "p":
		n.e.Mode |= syscall.S_IFIFO
	case "c":
		n.e.Mode |= syscall.S_IFCHR
		rdev, err := strconv.ParseUint(rest[0], 10, 64)
		if err != nil {
			return nil, err
		}
		n.e.Rdev, rest = rdev, rest[1:]
	default:
		return nil, fmt.Errorf("unknown type %q", f[1])
	}
	for _, x := range rest {
		name, val, _ := strings.Cut(x, "=")
		n.xattrs = append(n.xattrs, Xattr{Name: name, Value: []byte(val)})
	}
	return n, nil
}

func fakeContent(arg string) ([]byte, error) {
	if n, ok := strings.CutPrefix(arg, "@"); ok {
		size, err := strconv.Atoi(n)
		return randomData(uint64(size), size), err
	}
	s, err := strconv.Unquote(arg)
	return []byte(s), err
}

func (t *fakeTree) node(e TreeEntry) (*fakeNode, error) {
	p := t.pathOf(e.Ref)
	n, ok := t.nodes[p]
	if !ok {
		return nil, fmt.Errorf("fake tree: %q: %w", p, store.ErrNotFound)
	}
	return n, nil
}

func (t *fakeTree) Root(ctx context.Context) (TreeEntry, error) { return t.nodes["/"].e, nil }

func (t *fakeTree) Entry(ctx context.Context, ref TreeRef) (TreeEntry, error) {
	n, err := t.node(TreeEntry{Ref: ref})
	if err != nil {
		return TreeEntry{}, err
	}
	return n.e, nil
}

func (t *fakeTree) Lookup(ctx context.Context, dir TreeEntry, name string) (TreeEntry, error) {
	n, ok := t.nodes[path.Join(t.pathOf(dir.Ref), name)]
	if !ok {
		return TreeEntry{}, fmt.Errorf("fake tree: %q in %q: %w", name, t.pathOf(dir.Ref), store.ErrNotFound)
	}
	return n.e, nil
}

func (t *fakeTree) ReadDir(ctx context.Context, dir TreeEntry) (DirStream, error) {
	d, err := t.node(dir)
	if err != nil {
		return nil, err
	}
	return &fakeDir{t: t, kids: slices.Sorted(slices.Values(d.kids))}, nil
}

// fakeDir lists a fake directory; position i+1 follows entry i.
type fakeDir struct {
	t    *fakeTree
	kids []string
	i    int
}

func (d *fakeDir) Next(ctx context.Context) (TreeEntry, uint64, error) {
	if d.i >= len(d.kids) {
		return TreeEntry{}, 0, io.EOF
	}
	d.i++
	return d.t.nodes[d.kids[d.i-1]].e, uint64(d.i), nil
}

func (d *fakeDir) Seek(ctx context.Context, pos uint64) error {
	if pos > uint64(len(d.kids)) {
		return fmt.Errorf("%w: %d", ErrBadPosition, pos)
	}
	d.i = int(pos)
	return nil
}

func (d *fakeDir) Close() {}

func (t *fakeTree) Open(ctx context.Context, file TreeEntry) (TreeFile, error) {
	n, err := t.node(file)
	if err != nil {
		return nil, err
	}
	return fakeFile(n.content), nil
}

func (t *fakeTree) Readlink(ctx context.Context, link TreeEntry) (string, error) {
	n, err := t.node(link)
	if err != nil {
		return "", err
	}
	return n.target, nil
}

func (t *fakeTree) Xattrs(ctx context.Context, e TreeEntry) ([]Xattr, error) {
	n, err := t.node(e)
	if err != nil {
		return nil, err
	}
	return n.xattrs, nil
}

func (t *fakeTree) Close() error { return nil }

// fakeFile serves a file's content from memory.
type fakeFile []byte

func (f fakeFile) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	return bytes.NewReader(f).ReadAt(p, off)
}

func (f fakeFile) Close() error { return nil }
