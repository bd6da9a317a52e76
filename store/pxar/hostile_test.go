package pxar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// listDir lists dir with both readers and returns the first error.
func listDir(a *Accessor, dir *Entry) error {
	ctx := context.Background()
	sr, err := a.ReadDirSorted(ctx, dir)
	if err != nil {
		return err
	}
	for {
		if _, err := sr.Next(ctx); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
	}
	r, _ := a.ReadDir(dir)
	for {
		if _, err := r.Next(ctx); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func openCrafted(t *testing.T, meta []byte) *Accessor {
	t.Helper()
	a, err := NewAccessor(context.Background(), bytes.NewReader(meta), int64(len(meta)), nil, 0)
	if err != nil {
		t.Fatalf("open crafted archive: %v", err)
	}
	return a
}

func files(names ...string) []craft {
	var out []craft
	for _, n := range names {
		out = append(out, craft{name: n, data: "x"})
	}
	return out
}

// Duplicate names fail every way into a directory: listing in both orders
// and looking the name up, with a message naming the directory and name.
func TestDuplicateNames(t *testing.T) {
	many := files()
	for i := range 300 {
		many = append(many, craft{name: fmt.Sprintf("n%04d", i), data: "x"})
	}
	cases := []struct {
		name    string
		entries []craft
		dir     string // directory that holds the duplicate
		dup     string
	}{
		{"two files", files("a", "a"), "/", "a"},
		{"three files", files("a", "b", "a", "a"), "/", "a"},
		{"symlink then directory", []craft{{name: "a", target: "/elsewhere"}, {name: "a", dir: files("f")}}, "/", "a"},
		{"directory then file", []craft{{name: "a", dir: files("f")}, {name: "a", data: "y"}}, "/", "a"},
		{"in a subdirectory", []craft{{name: "d", dir: files("x", "y", "x")}}, "/d", "x"},
		{"deep", []craft{{name: "d", dir: []craft{{name: "e", dir: files("x", "x")}}}}, "/d/e", "x"},
		{"large directory, first", append(files("n0000"), many...), "/", "n0000"},
		{"large directory, last", append(many, files("n0299")...), "/", "n0299"},
		{"large directory, middle", append(append(many[:150:150], files("n0149")...), many[150:]...), "/", "n0149"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := openCrafted(t, craftArchive(c.entries, craftOpts{}))
			ctx := context.Background()
			dir := a.Root()
			if c.dir != "/" {
				var err error
				if dir, err = a.LookupPath(ctx, c.dir); err != nil {
					t.Fatal(err)
				}
			}
			want := fmt.Sprintf("directory %s holds %q more than once", c.dir, c.dup)
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrDuplicate) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v, want ErrDuplicate with %q", what, err, want)
				}
			}
			check("list", listDir(a, dir))
			_, err := a.Lookup(ctx, dir, c.dup)
			check("lookup", err)
			_, err = a.LookupPath(ctx, strings.TrimPrefix(c.dir+"/"+c.dup, "/"))
			check("lookup path", err)
			check("walk", walkAll(craftArchive(c.entries, craftOpts{}), nil, 10000))
		})
	}
}

// The same crafted archives without the duplicate are fine: the tests
// above fail for the duplicate, not for the crafting.
func TestCraftedValid(t *testing.T) {
	many := files()
	for i := range 300 {
		many = append(many, craft{name: fmt.Sprintf("n%04d", i), data: "x"})
	}
	for _, entries := range [][]craft{
		files("a", "b"), many,
		{{name: "a", target: "/elsewhere"}, {name: "b", dir: files("f", "g")}},
	} {
		meta := craftArchive(entries, craftOpts{})
		if err := walkAll(meta, nil, 10000); err != nil {
			t.Fatalf("%d entries: %v", len(entries), err)
		}
		a := openCrafted(t, meta)
		for _, e := range entries {
			if _, err := a.Lookup(context.Background(), a.Root(), e.name); err != nil {
				t.Fatalf("lookup %s: %v", e.name, err)
			}
		}
	}
}

// Equal hashes with different names are not duplicates: the table check
// passes them, and decoding the entry whose name does not hash to its
// item's hash fails.
func TestEqualHashDifferentNames(t *testing.T) {
	for _, entries := range [][]craft{
		{{name: "a", data: "x"}, {name: "b", data: "y", hash: HashFilename("a")}},
		{{name: "b", data: "y", hash: HashFilename("a")}, {name: "a", data: "x"}, {name: "c", data: "z", hash: HashFilename("a")}},
	} {
		a := openCrafted(t, craftArchive(entries, craftOpts{}))
		if e, err := a.Lookup(context.Background(), a.Root(), "a"); err != nil || e.Name != "a" {
			t.Fatalf("lookup a among equal hashes: %v %v", e, err)
		}
		err := listDir(a, a.Root())
		if errors.Is(err, ErrDuplicate) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "does not match") {
			t.Fatalf("list: %v, want a hash mismatch", err)
		}
	}
}

// A goodbye table that is not a sorted search tree is refused by listing
// and by the lookups whose path it breaks.
func TestUnsortedTable(t *testing.T) {
	names := []string{}
	for i := range 40 {
		names = append(names, fmt.Sprintf("f%02d", i))
	}
	a := openCrafted(t, craftArchive(files(names...), craftOpts{unsorted: true}))
	if err := listDir(a, a.Root()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not sorted by hash") {
		t.Fatalf("list: %v", err)
	}
	sorted := 0
	for _, n := range names {
		_, err := a.Lookup(context.Background(), a.Root(), n)
		switch {
		case err == nil || errors.Is(err, ErrNotFound):
			sorted++ // a path that happens to be ordered
		case !strings.Contains(err.Error(), "not sorted by hash"):
			t.Fatalf("lookup %s: %v", n, err)
		}
	}
	if sorted == len(names) {
		t.Fatal("no lookup noticed the unsorted table")
	}
	// Small tables are checked whole by every lookup.
	a = openCrafted(t, craftArchive(files("a", "b", "c", "d"), craftOpts{unsorted: true}))
	for _, n := range []string{"a", "b", "c", "d"} {
		if _, err := a.Lookup(context.Background(), a.Root(), n); err == nil || !strings.Contains(err.Error(), "not sorted by hash") {
			t.Fatalf("lookup %s in a small unsorted table: %v", n, err)
		}
	}
}

// Names that are empty, "." or "..", or hold '/' or NUL are refused
// where they are decoded, naming the directory.
func TestBadNames(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "a/b", "/", "a\x00b", "\x00", strings.Repeat("n", MaxFilenameLen+1)} {
		for _, where := range []string{"/", "/d"} {
			entries := append(files("ok"), craft{name: bad, data: "x"})
			if where == "/d" {
				entries = []craft{{name: "d", dir: entries}}
			}
			meta := craftArchive(entries, craftOpts{})
			err := walkAll(meta, nil, 1000)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "directory "+where) {
				t.Errorf("name %q in %s: %v", bad, where, err)
			}
		}
	}
}

// sparseReader is a stream of size bytes that are zero except for the
// given pieces: a hostile index can describe such a stream with a few
// chunks.
type sparseReader struct {
	size   int64
	pieces map[int64][]byte
}

func (s *sparseReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), s.size-off))
	clear(p[:n])
	for at, b := range s.pieces {
		lo, hi := max(at, off), min(at+int64(len(b)), off+int64(n))
		if lo < hi {
			copy(p[lo-off:hi-off], b[lo-at:hi-at])
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// hugeTable is a stream whose root goodbye table claims count items,
// after content bytes that start with a FILENAME and go on with zeros.
func hugeTable(count, content uint64) *sparseReader {
	root := appendMetadata(nil, &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}})
	size := HeaderSize + (count+1)*GoodbyeItemSize
	gb := uint64(len(root)) + content
	var h [HeaderSize]byte
	putHeader(h[:], TypeGoodbye, size-HeaderSize)
	tail := le.AppendUint64(nil, GoodbyeTailMarker)
	tail = le.AppendUint64(tail, gb)
	tail = le.AppendUint64(tail, size)
	return &sparseReader{size: int64(gb + size), pieces: map[int64][]byte{
		0:         append(root, appendItem(nil, TypeFilename, []byte("a\x00"))...), // ends the root's ENTRY
		int64(gb): h[:], int64(gb + size - GoodbyeItemSize): tail}}
}

// A goodbye table claiming 2^31 entries fails before memory grows with
// the claim: at open when the directory cannot hold that many entries,
// at the first bad item when the stream is large enough.
func TestHugeGoodbyeCount(t *testing.T) {
	ctx := context.Background()
	const count = 1 << 31
	small := hugeTable(count, 1000)
	if _, err := NewAccessor(ctx, small, small.size, nil, 0); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "hold at most") {
		t.Fatalf("open: %v", err)
	}
	big := hugeTable(count, count*minEntrySize)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a, err := NewAccessor(ctx, big, big.size, nil, 0)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if a.Root().Len() != count {
		t.Fatalf("root claims %d entries", a.Root().Len())
	}
	if err := listDir(a, a.Root()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "outside its directory") {
		t.Fatalf("list: %v", err)
	}
	// A lookup reads one path of 32 levels of zero items: nothing there.
	if _, err := a.Lookup(ctx, a.Root(), "x"); !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("lookup: %v", err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("allocated %d bytes for a hostile count", grew)
	}
}

// inOrder visits a goodbye table in sorted order, and pred and succ walk
// that order both ways, for every table size up to 70.
func TestInOrderNeighbours(t *testing.T) {
	for n := 1; n <= 70; n++ {
		var seq []uint64
		inOrder(n, func(i int) bool { seq = append(seq, uint64(i)); return true })
		heap := make([]int, n) // heap[i]: the rank of item i in a table bstPermute laid out
		bstPermute(n, func(src, dst int) { heap[dst] = src })
		for k, i := range seq {
			if heap[i] != k {
				t.Fatalf("n=%d: in-order item %d is %d, has rank %d", n, k, i, heap[i])
			}
		}
		tb := &table{dir: &Entry{count: uint64(n)}}
		for k, i := range seq {
			p, ok := tb.pred(i)
			if ok != (k > 0) || (ok && p != seq[k-1]) {
				t.Fatalf("n=%d: pred(%d) = %d %v", n, i, p, ok)
			}
			s, ok := tb.succ(i)
			if ok != (k < n-1) || (ok && s != seq[k+1]) {
				t.Fatalf("n=%d: succ(%d) = %d %v", n, i, s, ok)
			}
		}
	}
}

// Item sizes far beyond the stream or the item's limit fail as corrupt,
// before anything of that size is allocated: file names, symlink
// targets, hard links, xattrs, ACL entries, file capabilities, payloads.
func TestHugeItemSizes(t *testing.T) {
	g := uint64(3)
	rich := Metadata{Stat: Stat{Mode: ModeIFREG | 0o644},
		Xattrs: []Xattr{{Name: []byte("user.x"), Value: []byte("y")}},
		ACL:    ACL{Users: []ACLEntry{{ID: 1, Perm: 7}}, GroupObj: &g}, FCaps: []byte{1, 2}}
	tree := dirNode("",
		&node{name: "f", kind: KindFile, data: []byte("data"), meta: rich},
		&node{name: "l", kind: KindSymlink, target: "f", meta: Metadata{Stat: Stat{Mode: ModeIFLNK | 0o777}}},
		&node{name: "m", kind: KindFile, linkTo: "f"},
	)
	meta, _ := encodeTree(t, tree, false)
	types := map[string]uint64{"FILENAME": TypeFilename, "SYMLINK": TypeSymlink, "HARDLINK": TypeHardlink,
		"XATTR": TypeXattr, "ACL_USER": TypeACLUser, "ACL_GROUP_OBJ": TypeACLGroupObj, "FCAPS": TypeFCaps,
		"PAYLOAD": TypePayload, "ENTRY": TypeEntry}
	for name, typ := range types {
		at := itemAt(t, meta, typ, "")
		for _, size := range []uint64{1 << 20, 1 << 40, 1 << 63, 1<<64 - 1} {
			bad := patch(meta, at+8, le64(size))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := walkAll(bad, nil, 1000)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s of %d bytes: %v", name, size, err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
				t.Errorf("%s of %d bytes: allocated %d bytes", name, size, grew)
			}
		}
	}
}

// Lookups in empty directories (the root and a subdirectory, of tables
// small enough to be checked whole) find nothing (this panicked once).
func TestLookupEmptyDirectory(t *testing.T) {
	ctx := context.Background()
	for _, entries := range [][]craft{nil, {{name: "d", dir: []craft{}}}} {
		a := openCrafted(t, craftArchive(entries, craftOpts{}))
		dir := a.Root()
		if len(entries) > 0 {
			var err error
			if dir, err = a.Lookup(ctx, dir, "d"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Lookup(ctx, dir, "x"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("lookup in an empty directory: %v", err)
		}
		if err := listDir(a, dir); err != nil {
			t.Fatalf("listing an empty directory: %v", err)
		}
	}
}
