package test

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/test/e2e"
)

// outsideState records every path below dir with its type, mode, size,
// content and link target, to tell whether anything changed there.
func outsideState(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		s := fmt.Sprintf("%v %d", fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(path)
			s += " " + string(b)
		} else if fi.Mode()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(path)
			s += " -> " + l
		}
		m[path] = s
		return nil
	})
	return m
}

// checkTarNames fails unless every name and hard link target of the
// stream is relative and has no ".." component.
func checkTarNames(t *testing.T, what string, stream []byte) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(stream))
	for {
		h, err := tr.Next()
		if err != nil {
			return // the end, or a stream cut by the error cairn reported
		}
		for _, n := range []string{h.Name, map[bool]string{true: h.Linkname}[h.Typeflag == tar.TypeLink]} {
			if strings.HasPrefix(n, "/") || slices.Contains(strings.Split(n, "/"), "..") {
				t.Errorf("%s: tar entry %q (link %q) escapes", what, h.Name, h.Linkname)
			}
		}
	}
}

// TestCLIDumpHostile: dumps of crafted archives (every restore trick,
// random hostile trees, a payload reference of absurd size) either fail
// with a message or write a stream whose names stay relative without
// ".."; extracting whatever was written with GNU tar, as root, changes
// nothing outside the target. diff of each that dumps against a plain archive ends
// in bounded time without a panic.
func TestCLIDumpHostile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: extraction as root is what could do harm")
	}
	t.Parallel()
	st := e2e.SharedStore(t)
	sandbox := t.TempDir()
	outside := filepath.Join(sandbox, "outside")
	e2e.WriteTree(t, outside, map[string]string{"victim": "victim\n", "dir/keep": "keep\n"})
	type archive struct {
		name          string
		meta, payload []byte
		sorted        bool // every directory in name order: diff can merge it
	}
	var cases []archive
	add := func(name string, root *hostile.Node) {
		m, p := hostile.Encode(root)
		cases = append(cases, archive{name, m, p, sortedNode(root)})
	}
	// the base of the diffs
	add("sorted", hostile.Dir("", hostile.File("a", "1"), hostile.Dir("d", hostile.File("f", "2")), hostile.File("real", "3")))
	for _, tr := range hostile.Tricks(outside) {
		add(tr.Name, tr.Root)
	}
	for seed := range uint64(4) {
		add(fmt.Sprintf("random %d", seed), hostile.Random(seed, outside))
	}
	m, p := hostile.Encode(hostile.Dir("", hostile.File("big", "x")))
	var ref [8]byte
	binary.LittleEndian.PutUint64(ref[:], pxar.TypePayloadRef)
	i := bytes.Index(m, ref[:])
	if i < 0 {
		t.Fatal("no PAYLOAD_REF item in the crafted archive")
	}
	huge := slices.Clone(m)
	binary.LittleEndian.PutUint64(huge[i+pxar.HeaderSize+8:], 1<<50)
	cases = append(cases, archive{"absurd size", huge, p, true})

	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	snaps := make([]string, len(cases))
	for i, c := range cases {
		g := store.Group{Type: store.TypeHost, ID: fmt.Sprintf("dump-hostile-%d", i)}
		snap, err := hostile.Store(t.Context(), s, g, at, "root.pxar", c.meta, c.payload)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		snaps[i] = snap.String()
	}
	s.Close()
	before := outsideState(t, outside)
	failed := 0
	diffed := map[bool]int{} // by whether the archive is sorted
	for i, c := range cases {
		r := e2e.CairnBounded(t, "--store", st, "dump", snaps[i], "root.pxar")
		if strings.Contains(r.Stderr, "panic") || (r.Code != 0 && !strings.Contains(r.Stderr, "root.pxar")) {
			t.Errorf("%s: exit %d, stderr %q", c.name, r.Code, r.Stderr)
		}
		if r.Code != 0 {
			failed++
		}
		t.Logf("%s: exit %d, %d bytes, %s", c.name, r.Code, len(r.Stdout), strings.TrimSpace(r.Stderr))
		checkTarNames(t, c.name, []byte(r.Stdout))
		target := filepath.Join(sandbox, "target")
		os.RemoveAll(target)
		os.Mkdir(target, 0o755)
		x := exec.Command("tar", "-x", "--xattrs", "--xattrs-include=*", "--acls", "-p", "-C", target)
		x.Stdin = strings.NewReader(r.Stdout)
		x.Run() // a stream cut by an error makes tar fail: what it extracted counts
		if after := outsideState(t, outside); !maps.Equal(before, after) {
			t.Fatalf("%s: extracting the dump changed %s:\nbefore %v\nafter  %v", c.name, outside, before, after)
		}
		if c.name == "absurd size" && (r.Code == 0 || !strings.Contains(r.Stderr, "payload reference")) {
			t.Errorf("absurd size: exit %d, stderr %q", r.Code, r.Stderr)
		}
		if r.Code != 0 {
			continue // the same decoder errors end a diff
		}
		// An archive whose directories are not in name order is refused.
		d := e2e.CairnBounded(t, "--store", st, "diff", snaps[0], snaps[i])
		if strings.Contains(d.Stderr, "panic") || d.Code != map[bool]int{true: 0, false: 1}[c.sorted] ||
			(!c.sorted && !strings.Contains(d.Stderr, "not in name order")) {
			t.Errorf("diff %s: exit %d, stderr %q", c.name, d.Code, d.Stderr)
		}
		diffed[c.sorted]++
	}
	if diffed[true] < 2 || diffed[false] == 0 {
		t.Errorf("diffs of sorted and unsorted archives: %v", diffed)
	}
	if failed == 0 || failed == len(cases) {
		t.Errorf("%d of %d hostile dumps failed: the cases do not test both ways", failed, len(cases))
	}
}

// sortedNode reports whether every directory of n lists its entries in
// strictly increasing name order.
func sortedNode(n *hostile.Node) bool {
	for i, k := range n.Kids {
		if i > 0 && n.Kids[i-1].Name >= k.Name || !sortedNode(k) {
			return false
		}
	}
	return true
}

// TestCLIDumpSkipsInvalidNames: an archive entry a tar stream cannot
// hold, of each class (names empty, ".", "..", holding "/" or NUL, too
// long for a file name item; a device number no header carries), is
// left out with what lies below it and named (escaped) on stderr; the
// stream is a complete tar that archive/tar and GNU tar read to its end,
// holding every other entry, and the exit code is 3.
func TestCLIDumpSkipsInvalidNames(t *testing.T) {
	t.Parallel()
	cases := dumpNameCases()
	st := e2e.SharedStore(t)
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	snaps := make([]string, len(cases))
	for i, c := range cases {
		m, p := hostile.Encode(c.root)
		g := store.Group{Type: store.TypeHost, ID: fmt.Sprintf("dump-names-%d", i)}
		snap, err := hostile.Store(t.Context(), s, g, time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), "root.pxar", m, p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		snaps[i] = snap.String()
	}
	s.Close()
	for i, c := range cases {
		r := e2e.CairnBounded(t, "--store", st, "dump", "-q", snaps[i], "root.pxar")
		if r.Code != 3 || strings.Count(r.Stderr, " skipped: ") != c.skipped || !strings.Contains(r.Stderr, "entries skipped") ||
			strings.ContainsAny(r.Stderr, "\x00\x1b") {
			t.Errorf("%s: exit %d, stderr %q; want exit 3 and %d skipped", c.name, r.Code, r.Stderr, c.skipped)
		}
		if got := readTarNames(t, c.name, []byte(r.Stdout)); !slices.Equal(got, c.want) {
			t.Errorf("%s: archive/tar reads %q, want %q", c.name, got, c.want)
		}
		gnu := exec.Command("tar", "-t", "-f", "-")
		gnu.Stdin = strings.NewReader(r.Stdout)
		out, err := gnu.CombinedOutput()
		if got := strings.Fields(string(out)); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: GNU tar -t: %v, lists %q, want %q", c.name, err, got, c.want)
		}
	}
}

// dumpCase is a crafted archive and what its dump must hold.
type dumpCase struct {
	name    string
	root    *hostile.Node
	want    []string // the stream's names
	skipped int
}

// dumpNameCases are archives with entries of each class a tar stream
// cannot hold beside entries it can.
func dumpNameCases() []dumpCase {
	var cases []dumpCase
	classes := []string{"", ".", "..", "a/b", "../x", "/abs", "a\x00b", "\x00"}
	for i, bad := range classes {
		badDir := classes[(i+1)%len(classes)] // another name: equal names fail their whole directory
		cases = append(cases, dumpCase{fmt.Sprintf("name %q", bad), hostile.Dir("", hostile.File("a", "1"),
			hostile.Dir("d", hostile.File(bad, "x"), hostile.File("e", "2"), hostile.Dir(badDir, hostile.File("below", "y")), hostile.File("f", "3")),
			hostile.File("z", "4")), []string{"./", "a", "d/", "d/e", "d/f", "z"}, 2})
	}
	long := strings.Repeat("n", pxar.MaxFilenameLen+1)
	return append(cases,
		dumpCase{"name too long", hostile.Dir("", hostile.File("a", "1"), hostile.Dir("d", hostile.File(long, "x"), hostile.File("e", "2")),
			hostile.File("z", "4")), []string{"./", "a", "z"}, 1},
		dumpCase{"device number too large", hostile.Dir("", hostile.File("a", "1"),
			&hostile.Node{Name: "dev", Kind: pxar.KindDevice, Mode: 0o600, Dev: pxar.Device{Major: 1 << 40}}, hostile.File("z", "4")),
			[]string{"./", "a", "z"}, 1})
}

// readTarNames reads a tar stream to its end (a stream that stops short
// fails the test) and returns its names; regular files must hold what
// the crafted archives give them (their names' last byte).
func readTarNames(t *testing.T, what string, stream []byte) []string {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(stream))
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Errorf("%s: tar stream after %q: %v", what, names, err)
			return names
		}
		names = append(names, h.Name)
		data, err := io.ReadAll(tr)
		if want := map[string]string{"a": "1", "d/e": "2", "d/f": "3", "z": "4"}[h.Name]; err != nil || string(data) != want {
			t.Errorf("%s: %s holds %q (%v), want %q", what, h.Name, data, err, want)
		}
	}
}
