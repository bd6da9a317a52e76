package test

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// browseEntry is an entry of ls --json and find --json.
type browseEntry struct {
	Path        string `json:"path"`
	Type        string `json:"type"`
	Mode        uint64 `json:"mode"`
	Permissions string `json:"permissions"`
	UID         uint32 `json:"uid"`
	GID         uint32 `json:"gid"`
	User        string `json:"user"`
	Group       string `json:"group"`
	Size        uint64 `json:"size"`
	Mtime       string `json:"mtime"`
	Target      string `json:"target"`
}

type browseListing struct {
	Snapshot, Archive, Path string
	Entries                 []browseEntry
	Errors                  []struct{ Path, Error string }
}

const escName = "esc\x1b[31mred" // a name that would color a terminal

// browseTree writes a small tree: files, a subdirectory, an old file
// owned by 65534, a symlink, a FIFO and a name with a control character.
func browseTree(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	e2e.WriteTree(t, src, map[string]string{"a.txt": "ay\n", "dir/big.bin": string(e2e.RandBytes(64<<10, 21)),
		"dir/sub/deep.txt": "deep", "dir/old.txt": "old", escName: "x"})
	old := filepath.Join(src, "dir", "old.txt")
	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(old, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(src, "dir", "fifo"), 0o640); err != nil {
		t.Fatal(err)
	}
	return src
}

// sourceEntries lists src as ls -R --json should: paths relative to src,
// depth first in name order.
func sourceEntries(t *testing.T, src string) []browseEntry {
	t.Helper()
	var out []browseEntry
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == src {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		e := browseEntry{Path: rel, Mode: uint64(st.Mode) & 0o7777, UID: st.Uid, GID: st.Gid,
			Mtime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC().Format(time.RFC3339Nano)}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFREG:
			e.Type, e.Size = "file", uint64(st.Size)
		case syscall.S_IFDIR:
			e.Type = "directory"
		case syscall.S_IFLNK:
			e.Type = "symlink"
			e.Target, _ = os.Readlink(p)
		case syscall.S_IFIFO:
			e.Type = "fifo"
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeListing(t *testing.T, out string) browseListing {
	t.Helper()
	var l browseListing
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&l); err != nil || dec.More() {
		t.Fatalf("not one JSON document (%v):\n%s", err, out)
	}
	return l
}

// hostName is this host's name for a user or group ID, or the number.
func hostName(id uint32, group bool) string {
	s := strconv.FormatUint(uint64(id), 10)
	if group {
		if g, err := user.LookupGroupId(s); err == nil {
			return g.Name
		}
		return s
	}
	if u, err := user.LookupId(s); err == nil {
		return u.Username
	}
	return s
}

// TestCLIBrowseLs: ls SNAPSHOT lists the archives (kind, size, storage),
// ls ARCHIVE lists as before, -R walks the subtree, -l names owners,
// --json is one document matching the source tree, --ns and ns/… name
// the snapshot alike, and names with control characters are escaped.
func TestCLIBrowseLs(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	src := browseTree(t)
	img, _ := e2e.SparseImage(t, 256<<10, 22)
	e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", "browse-ls", "--ns", "cli/browse", "-q",
		"disk.img:"+img, "root.pxar:"+src)
	ls := func(args ...string) e2e.Result {
		return e2e.MustCairn(t, append([]string{"--store", st, "ls", "--ns", "cli/browse", "host/browse-ls"}, args...)...)
	}

	var arch struct {
		Snapshot string
		Archives []struct {
			Name, Kind, Storage string
			Size                uint64
			Files               []struct {
				Name string
				Size uint64
			}
		}
	}
	if err := json.Unmarshal([]byte(ls("--json").Stdout), &arch); err != nil || len(arch.Archives) != 2 {
		t.Fatalf("ls --json: %+v, %v", arch, err)
	}
	byName := map[string]int{}
	for i, a := range arch.Archives {
		byName[a.Name] = i
	}
	im, fa := arch.Archives[byName["disk.img"]], arch.Archives[byName["root.pxar"]]
	if im.Kind != "image" || im.Size < 256<<10 || fa.Kind != "file_archive" || len(fa.Files) != 2 ||
		fa.Files[0].Name != "root.mpxar.didx" || fa.Files[1].Name != "root.ppxar.didx" || fa.Files[1].Size < 64<<10 ||
		fa.Size != fa.Files[0].Size+fa.Files[1].Size || !strings.HasPrefix(arch.Snapshot, "ns/cli/ns/browse/host/browse-ls/") {
		t.Fatalf("ls --json: %+v", arch)
	}
	text := ls().Stdout
	if !strings.Contains(text, "disk.img") || !strings.Contains(text, "image") || !strings.Contains(text, "split: metadata") {
		t.Errorf("ls SNAPSHOT:\n%s", text)
	}
	qualified := e2e.MustCairn(t, "--store", st, "ls", "ns/cli/ns/browse/host/browse-ls", "--json").Stdout
	if qualified != ls("--json").Stdout {
		t.Errorf("ns/… form differs from --ns:\n%s", qualified)
	}

	flat := ls("root.pxar").Stdout
	if !strings.Contains(flat, `"esc\x1b[31mred"`) || strings.ContainsRune(flat, 0x1b) || strings.Contains(flat, "big.bin") ||
		!strings.Contains(flat, "link -> a.txt") {
		t.Errorf("ls root.pxar:\n%q", flat)
	}
	want := sourceEntries(t, src)
	got := decodeListing(t, ls("root.pxar", "-R", "--json").Stdout)
	if len(got.Errors) != 0 || len(got.Entries) != len(want) {
		t.Fatalf("ls -R --json: %d entries, %v errors; want %d:\n%+v", len(got.Entries), got.Errors, len(want), got.Entries)
	}
	for i, w := range want {
		g := got.Entries[i]
		w.Permissions, w.User, w.Group = g.Permissions, hostName(w.UID, false), hostName(w.GID, true)
		if w.User == strconv.Itoa(int(w.UID)) {
			w.User = "" // no name: no key
		}
		if w.Group == strconv.Itoa(int(w.GID)) {
			w.Group = ""
		}
		if g != w {
			t.Errorf("entry %d: %+v, want %+v", i, g, w)
		}
	}
	long := ls("root.pxar", "dir", "-R", "-l").Stdout
	oldLine := ""
	for line := range strings.Lines(long) {
		if strings.HasSuffix(line, " old.txt\n") {
			oldLine = line
		}
	}
	f := strings.Fields(oldLine)
	if len(f) < 7 || f[1] != hostName(65534, false) || f[2] != hostName(65534, true) || f[4] != "2020-01-02" ||
		!strings.Contains(long, "sub/deep.txt") || !strings.Contains(long, "prw-r-----") {
		t.Errorf("ls -R -l dir:\n%s", long)
	}
	numeric := ls("root.pxar", "dir").Stdout
	if !strings.Contains(numeric, " 65534 ") {
		t.Errorf("ls without -l shows no numeric owner:\n%s", numeric)
	}
	comp := e2e.MustCairn(t, "--store", st, "__complete", "ls", "--ns", "cli/browse", "host/browse-ls", "root.pxar", "dir/s").Stdout
	if !strings.HasPrefix(comp, "dir/sub/\n:") {
		t.Errorf("completion of dir/s: %q", comp)
	}
	comp = e2e.MustCairn(t, "--store", st, "__complete", "find", "ns/cli/ns/browse/host/browse-ls", "root.pxar", "").Stdout
	if !strings.Contains(comp, "a.txt\ndir/\n") || strings.Contains(comp, "esc") {
		t.Errorf("completion of the root: %q", comp)
	}
	if got := e2e.MustCairn(t, "--store", st, "cat", "--ns", "cli/browse", "host/browse-ls", "root.pxar", "dir/sub/deep.txt").Stdout; got != "deep" {
		t.Errorf("cat --ns: %q", got)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ls", "--ns", "other", "ns/cli/ns/browse/host/browse-ls"}, 2, "--ns says"},
		{[]string{"ls", "--ns", "../x", "host/browse-ls"}, 2, "--ns"},
		{[]string{"ls", "-R", "--ns", "cli/browse", "host/browse-ls"}, 2, "need an ARCHIVE"},
		{[]string{"cat", "--ns", "cli/nothere", "host/browse-ls", "disk.img"}, 1, "ns/cli/ns/nothere/host/browse-ls"},
	} {
		r := e2e.Cairn(t, nil, append([]string{"--store", st}, c.args...)...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, r.Code, c.code, r.Stderr, c.want)
		}
	}
}

// TestCLIBrowseFind: find's tests select what find(1) would, paths are
// printed from the archive's root (escaped, or raw with -0), --json is
// one document, and bad values are usage errors.
func TestCLIBrowseFind(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	src := browseTree(t)
	e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", "browse-find", "-q", "root.pxar:"+src)
	find := func(args ...string) []string {
		r := e2e.MustCairn(t, append([]string{"--store", st, "find", "host/browse-find", "root.pxar"}, args...)...)
		if r.Stdout == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--name", "*.txt"}, []string{"/a.txt", "/dir/old.txt", "/dir/sub/deep.txt"}},
		{[]string{"dir", "--type", "d"}, []string{"/dir", "/dir/sub"}},
		{[]string{"--type", "l,p"}, []string{"/dir/fifo", "/link"}},
		{[]string{"--type", "f", "--newer", "2021-01-01"}, []string{"/a.txt", "/dir/big.bin", "/dir/sub/deep.txt", `"/esc\x1b[31mred"`}},
		{[]string{"--name", "*.txt", "--newer", "2020-01-02 03:04"}, []string{"/a.txt", "/dir/old.txt", "/dir/sub/deep.txt"}},
		{[]string{"--name", "*.txt", "--newer", "2020-01-02T03:04:05Z"}, []string{"/a.txt", "/dir/sub/deep.txt"}},
		{[]string{"--name", "*.txt", "--newer", "2d"}, []string{"/a.txt", "/dir/sub/deep.txt"}},
		{[]string{"--size", "+1k"}, []string{"/dir/big.bin"}},
		{[]string{"--size", "3"}, []string{"/a.txt", "/dir/old.txt"}},
		{[]string{"--type", "f", "--size", "-2"}, []string{`"/esc\x1b[31mred"`}},
		{[]string{"--path", "/dir/*/*"}, []string{"/dir/sub/deep.txt"}},
		{[]string{"--path", "*sub*"}, []string{"/dir/sub", "/dir/sub/deep.txt"}},
		{[]string{"--name", "[a-b]*"}, []string{"/a.txt", "/dir/big.bin"}},
		{[]string{"--name", "[!a-z]*"}, nil},
	} {
		got := find(c.args...)
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("find %v: %q, want %q", c.args, got, c.want)
		}
	}
	raw := e2e.MustCairn(t, "--store", st, "find", "host/browse-find", "root.pxar", "--name", "esc*", "-0").Stdout
	if raw != "/"+escName+"\x00" {
		t.Errorf("find -0: %q", raw)
	}
	l := decodeListing(t, e2e.MustCairn(t, "--store", st, "find", "host/browse-find", "root.pxar", "dir", "--size", "+1k", "--json").Stdout)
	if len(l.Entries) != 1 || l.Entries[0].Path != "/dir/big.bin" || l.Entries[0].Size != 64<<10 || l.Path != "dir" || l.Archive != "root.pxar" {
		t.Errorf("find --json: %+v", l)
	}
	for _, c := range []struct{ flag, value string }{
		{"--type", "x"}, {"--type", "f,"}, {"--newer", "yesterday"}, {"--newer", "-3h"}, {"--size", "1q"},
		{"--size", "+-1"}, {"--name", "[a"}, {"--path", `x\`}, {"--name", "[z-a]"},
	} {
		r := e2e.Cairn(t, nil, "--store", st, "find", "host/browse-find", "root.pxar", c.flag, c.value)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.flag) {
			t.Errorf("find %s %q: exit %d, stderr %q; want exit 2 naming %s", c.flag, c.value, r.Code, r.Stderr, c.flag)
		}
	}
	if r := e2e.Cairn(t, nil, "--store", st, "find", "host/browse-find", "root.pxar", "nothere"); r.Code != 1 || !strings.Contains(r.Stderr, "nothere") {
		t.Errorf("find in a missing path: exit %d, %q", r.Code, r.Stderr)
	}
}
