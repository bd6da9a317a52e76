package test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// diffFixTimes sets every mtime below root (symlinks' own too) to one time,
// so that only the changes a test makes show.
func diffFixTimes(t *testing.T, root string) {
	t.Helper()
	ts := unix.NsecToTimespec(time.Date(2022, 1, 2, 3, 4, 5, 600, time.UTC).UnixNano())
	err := filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
	})
	if err != nil {
		t.Fatal(err)
	}
}

type diffJSON struct {
	Changes []struct {
		Archive, Path, Change, Type string
		Reasons                     []string
	} `json:"changes"`
	From, To string
	Content  bool
	Archives []struct {
		Archive, Kind, Status string
		Added, Removed        int64
		Changed               int64
		FromSize              uint64 `json:"from_size"`
		ToSize                uint64 `json:"to_size"`
		Chunks                int
		ChunksDiffer          int   `json:"chunks_differ"`
		BytesDiffer           int64 `json:"bytes_differ"`
	}
	Added, Removed, Changed int64
}

// TestCLIDiff: diff of two snapshots lists added, removed and changed
// paths of a file archive with the reasons, and --content finds the file
// whose content changed under the same size and mtime; images differ by
// the chunks that changed; archives of one snapshot only are reported;
// --json gives the same with totals; identical snapshots show nothing;
// --ns and the ns/… form name snapshots of a namespace.
func TestCLIDiff(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: owners")
	}
	t.Parallel()
	st := e2e.SharedStore(t)
	src := t.TempDir()
	e2e.WriteTree(t, src, map[string]string{"a": "same size 1", "b": "short", "d/x": "x", "d/y": "y", "o": "o", "t/f": "f"})
	setupOK(t, os.Symlink("a", filepath.Join(src, "l")))
	img, _ := e2e.SparseImage(t, 1<<20, 51)
	extra, _ := e2e.SparseImage(t, 64<<10, 52)
	diffFixTimes(t, src)
	backup := func(when string, args ...string) string {
		args = append([]string{"--store", st, "backup", "--ns", "diff/n", "--id", "cli-diff", "--chunk-size", "64K",
			"--time", when, "--json"}, args...)
		return e2e.ParsePxarSummary(t, e2e.MustCairn(t, args...).Stdout).Snapshot
	}
	s1 := backup("2024-01-01T00:00:00Z", "root.pxar:"+src, "disk.img:"+img, "extra.img:"+extra)

	setupOK(t, os.WriteFile(filepath.Join(src, "a"), []byte("same size 2"), 0o644))
	setupOK(t, os.WriteFile(filepath.Join(src, "b"), []byte("longer now"), 0o644))
	setupOK(t, unix.Setxattr(filepath.Join(src, "b"), "user.k", []byte("v"), 0))
	setupOK(t, os.Remove(filepath.Join(src, "d/x")))
	setupOK(t, os.WriteFile(filepath.Join(src, "d/z"), []byte("z"), 0o644))
	setupOK(t, os.Chmod(filepath.Join(src, "d/y"), 0o600))
	setupOK(t, unix.Setxattr(filepath.Join(src, "d"), "system.posix_acl_access", storetest.ACLXattr([3]uint32{1, 7, dumpACLUndef},
		[3]uint32{2, 5, 1234}, [3]uint32{4, 5, dumpACLUndef}, [3]uint32{0x10, 5, dumpACLUndef}, [3]uint32{0x20, 5, dumpACLUndef}), 0))
	setupOK(t, os.Chown(filepath.Join(src, "o"), 77, 88))
	setupOK(t, os.Remove(filepath.Join(src, "l")))
	setupOK(t, os.Symlink("b", filepath.Join(src, "l")))
	setupOK(t, os.RemoveAll(filepath.Join(src, "t")))
	setupOK(t, os.WriteFile(filepath.Join(src, "t"), []byte("now a file"), 0o644))
	diffFixTimes(t, src)
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	setupOK(t, err)
	_, err = f.WriteAt([]byte("changed"), 200<<10)
	setupOK(t, err)
	f.Close()
	s2 := backup("2024-01-02T00:00:00Z", "root.pxar:"+src, "disk.img:"+img, "new.img:"+extra)

	store := []string{"--store", st}
	r := e2e.MustCairn(t, append(store, "diff", s1, s2)...)
	want := []string{
		"M disk.img: 1 of 16 chunks differ (64 KiB of 1.0 MiB)",
		"- extra.img (archive only in " + s1 + ")",
		"+ new.img (archive only in " + s2 + ")",
		"M root.pxar/b (size, xattrs)",
		"M root.pxar/d/ (acl)",
		"- root.pxar/d/x",
		"M root.pxar/d/y (mode)",
		"+ root.pxar/d/z",
		"M root.pxar/l (target)",
		"M root.pxar/o (owner)",
		"M root.pxar/t (type)",
		"- root.pxar/t/f",
		s1 + " -> " + s2 + ": 2 added, 3 removed, 7 changed (4 archives compared, 0 unchanged)",
	}
	if got := strings.Split(strings.TrimSpace(r.Stdout), "\n"); !slices.Equal(got, want) {
		t.Errorf("diff:\n%s\nwant:\n%s", r.Stdout, strings.Join(want, "\n"))
	}

	// --content reads the payloads of files of equal size: a changed too.
	var j diffJSON
	r = e2e.MustCairn(t, append(store, "diff", "--content", "--json", "--ns", "diff/n", strings.TrimPrefix(s1, "ns/diff/ns/n/"), s2, "root.pxar")...)
	if err := json.Unmarshal([]byte(r.Stdout), &j); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.Stdout)
	}
	if len(j.Changes) != 10 || j.Changes[0].Path != "/a" || !slices.Equal(j.Changes[0].Reasons, []string{"content"}) ||
		j.Added != 1 || j.Removed != 2 || j.Changed != 7 || !j.Content || len(j.Archives) != 1 ||
		j.Archives[0].Status != "changed" || j.Archives[0].Changed != 7 || j.From != s1 {
		t.Errorf("diff --content --json: %+v", j)
	}
	if c := j.Changes[len(j.Changes)-1]; c.Path != "/t/f" || c.Change != "removed" || c.Type != "file" || c.Archive != "root.pxar" {
		t.Errorf("last change %+v", c)
	}
	j = diffJSON{}
	r = e2e.MustCairn(t, append(store, "diff", "--json", s1, s2, "disk.img")...)
	if err := json.Unmarshal([]byte(r.Stdout), &j); err != nil || len(j.Archives) != 1 || j.Archives[0].ChunksDiffer != 1 ||
		j.Archives[0].Chunks != 16 || j.Archives[0].BytesDiffer != 64<<10 || j.Changed != 1 || len(j.Changes) != 0 {
		t.Errorf("diff disk.img --json: %v %+v", err, j)
	}

	r = e2e.MustCairn(t, append(store, "diff", s2, s2)...)
	if want := s2 + " -> " + s2 + ": 0 added, 0 removed, 0 changed (3 archives compared, 3 unchanged)\n"; r.Stdout != want {
		t.Errorf("diff of a snapshot with itself: %q", r.Stdout)
	}
	if r := e2e.MustCairn(t, append(store, "-q", "diff", s2, s2)...); r.Stdout != "" {
		t.Errorf("-q diff printed %q", r.Stdout)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"diff", s1, s2, "nope.img"}, 2, "nope.img"},
		{[]string{"diff", "--ns", "other", s1, s2}, 2, "other"},
		{[]string{"diff", s1, "host/nothere/2024-01-01T00:00:00Z"}, 1, "nothere"},
		{[]string{"diff", "--cache-size", "x", s1, s2}, 2, "--cache-size"},
	} {
		r := e2e.Cairn(t, nil, append(store, c.args...)...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "panic") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, r.Code, r.Stderr, c.code, c.want)
		}
	}
}
