package walk

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/storetest"
	"golang.org/x/sys/unix"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(data), 0o644))
}

func walkTo(t *testing.T, root string, split bool, opts Options) (*pxar.Accessor, Stats, []byte, []byte) {
	t.Helper()
	var mb, pb bytes.Buffer
	var pw io.Writer
	if split {
		pw = &pb
	}
	st, err := Walk(context.Background(), root, &mb, pw, opts)
	must(t, err)
	var pr io.ReaderAt
	if split {
		pr = bytes.NewReader(pb.Bytes())
	}
	a, err := pxar.NewAccessor(context.Background(), bytes.NewReader(mb.Bytes()), int64(mb.Len()), pr, int64(pb.Len()))
	must(t, err)
	return a, st, mb.Bytes(), pb.Bytes()
}

func TestWalkRoundTrip(t *testing.T) {
	root := t.TempDir()
	extra := storetest.RichTree(t, root)
	for _, split := range []bool{true, false} {
		var reported []string
		a, st, _, _ := walkTo(t, root, split, Options{OnError: func(p string, err error) { reported = append(reported, p) }})
		if len(reported) != 0 || st.Errors != 0 {
			t.Errorf("errors reported: %q", reported)
		}
		if st.Hardlinks != 2 || st.Symlinks != 3 {
			t.Errorf("stats %+v", st)
		}
		storetest.CompareTree(t, a, root, storetest.TreeOptions{Want: extra})
	}
}

func TestWalkExcludes(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root+"/keep", "k")
	writeFile(t, root+"/top-excluded", "x")
	writeFile(t, root+"/sub/top-excluded", "kept: anchored at the root")
	writeFile(t, root+"/sub/x.o", "x")
	writeFile(t, root+"/ex/.pxarexclude", "# comment\n  *.tmp  \n/sub-only\n!keep.tmp\nlogs/\n")
	writeFile(t, root+"/ex/a.tmp", "x")
	writeFile(t, root+"/ex/keep.tmp", "k")
	writeFile(t, root+"/ex/sub-only", "x")
	writeFile(t, root+"/ex/nested/sub-only", "kept: anchored to ex/")
	writeFile(t, root+"/ex/nested/b.tmp", "x")
	writeFile(t, root+"/ex/logs/l", "x")
	writeFile(t, root+"/ex/nested/logs", "kept: a file, not a directory")
	writeFile(t, root+"/other/a.tmp", "kept: outside ex/")
	excluded := map[string]bool{"top-excluded": true, "sub/x.o": true, "ex/a.tmp": true, "ex/sub-only": true,
		"ex/nested/b.tmp": true, "ex/logs": true}
	opts := Options{Exclude: []string{"/top-excluded", "*.o"}}
	for _, split := range []bool{true, false} {
		a, st, _, _ := walkTo(t, root, split, opts)
		if st.Excluded != uint64(len(excluded)) {
			t.Errorf("split=%v: %d excluded, want %d", split, st.Excluded, len(excluded))
		}
		skip := func(rel string) bool { return excluded[rel] }
		if split {
			if got := string(a.Prelude()); got != `{"exclude-patterns":"/top-excluded\n*.o\n"}` {
				t.Errorf("prelude %q", got)
			}
			storetest.CompareTree(t, a, root, storetest.TreeOptions{Skip: skip})
			continue
		}
		e, err := a.LookupPath(context.Background(), cliName)
		must(t, err)
		r, _ := a.Open(context.Background(), e)
		got, _ := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		if string(got) != "/top-excluded\n*.o\n" {
			t.Errorf(".pxarexclude-cli holds %q", got)
		}
	}
}

func TestWalkReportsAndGoesOn(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root+"/a", "aaaa")
	writeFile(t, root+"/b-shrinks", "0123456789")
	writeFile(t, root+"/c-vanishes", "c")
	writeFile(t, root+"/d", "d")
	hook := func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
		switch f.Name {
		case "a":
			must(t, os.Remove(root+"/c-vanishes"))
		case "b-shrinks":
			must(t, os.Truncate(root+"/b-shrinks", 3))
		}
		return CopyFile(ctx, enc, f)
	}
	got := map[string]error{}
	// Without the helper: a file it opened before the removal is held
	// open for the walk and stored as it was when opened.
	a, st, _, _ := walkTo(t, root, true, Options{File: hook, OnError: func(p string, err error) { got[p] = err },
		ReadAhead: ReadAhead{Off: true}})
	if !errors.Is(got["c-vanishes"], fs.ErrNotExist) || st.Errors != 2 {
		t.Errorf("reports %v, stats %+v", got, st)
	}
	var ce *pxar.ContentError
	if !errors.As(got["b-shrinks"], &ce) {
		t.Errorf("shrunk file reported as %v", got["b-shrinks"])
	}
	for _, name := range []string{"a", "b-shrinks", "d"} {
		if _, err := a.LookupPath(context.Background(), name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A directory on another file system is stored without its contents.
func TestWalkMountPoint(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root+"/mnt/.keep", "")
	if err := unix.Mount("tmpfs", root+"/mnt", "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount tmpfs: %v", err)
	}
	defer unix.Unmount(root+"/mnt", unix.MNT_DETACH)
	writeFile(t, root+"/mnt/inside", "on tmpfs")
	for _, all := range []bool{false, true} {
		a, st, _, _ := walkTo(t, root, true, Options{AllFileSystems: all})
		_, err := a.LookupPath(context.Background(), "mnt/inside")
		if all != (err == nil) || (st.MountPoints == 1) == all {
			t.Errorf("all=%v: lookup %v, stats %+v", all, err, st)
		}
	}
}
