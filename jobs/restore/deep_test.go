package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// openBelow opens the path rel below dir one component at a time (rel
// may be longer than PATH_MAX).
func openBelow(t *testing.T, dir string, comps []string) (*os.File, unix.Stat_t) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range comps {
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatalf("open component %d %q: %v", i, c, err)
		}
		fd = next
	}
	var st unix.Stat_t
	unix.Fstat(fd, &st)
	return os.NewFile(uintptr(fd), strings.Join(comps, "/")), st
}

// TestTreeRestoreDeep restores trees whose paths are longer than
// PATH_MAX (long names) and deeper than the levels that keep their
// descriptors (short names), and checks every level's mode and the
// leaf's content, and that no descriptor is left open.
func TestTreeRestoreDeep(t *testing.T) {
	h := newHostileStore(t)
	for _, c := range []struct{ depth, nameLen int }{{24, 200}, {3 * heldDepth, 3}} {
		t.Run(fmt.Sprintf("depth=%d,name=%d", c.depth, c.nameLen), func(t *testing.T) {
			root := hostile.Deep(c.depth, c.nameLen)
			var comps []string
			n := root
			for i := 0; i < c.depth; i++ {
				n = n.Kids[0]
				n.Mode = 0o750 - uint64(i%2)*0o10
				comps = append(comps, n.Name)
			}
			if c.nameLen > 100 && len(strings.Join(comps, "/")) <= 4096 {
				t.Fatalf("the path is not longer than PATH_MAX")
			}
			before := openFDs(t)
			target := filepath.Join(t.TempDir(), "target")
			rep, err := h.restore(t, root, target, false)
			if err != nil {
				t.Fatalf("%v %+v", err, rep.Failed)
			}
			if after := openFDs(t); after > before {
				t.Fatalf("%d descriptors open after the restore, %d before", after, before)
			}
			for i := 1; i <= c.depth; i++ {
				f, st := openBelow(t, target, comps[:i])
				f.Close()
				if want := uint32(0o750 - uint32((i-1)%2)*0o10); st.Mode&0o7777 != want {
					t.Fatalf("level %d: mode %o, want %o", i, st.Mode&0o7777, want)
				}
			}
			f, _ := openBelow(t, target, append(comps, "leaf"))
			defer f.Close()
			if b, _ := io.ReadAll(f); !bytes.Equal(b, []byte("bottom")) {
				t.Fatalf("leaf holds %q", b)
			}
		})
	}
}

// TestTreeRestoreTargetSymlink: a target that is a symbolic link is
// refused, with or without overwrite, and what it points to is left
// alone.
func TestTreeRestoreTargetSymlink(t *testing.T) {
	h := newHostileStore(t)
	for _, overwrite := range []bool{false, true} {
		sb := newSandbox(t)
		os.Remove(sb.target)
		if err := os.Symlink(sb.outside, sb.target); err != nil {
			t.Fatal(err)
		}
		before := sb.state(t)
		_, err := h.restore(t, hostile.Dir("", hostile.File("victim", "pwned")), sb.target, overwrite)
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("overwrite=%v: restore into a symlink: %v", overwrite, err)
		}
		if after := sb.state(t); after != before {
			t.Fatalf("overwrite=%v: the sandbox changed:\n%s\n%s", overwrite, before, after)
		}
	}
}

// TestTreeRestoreSingleEntry restores one file of an archive (--path) to
// a file target: a new one, an existing one (refused without overwrite)
// and a symbolic link pointing outside (replaced with overwrite, never
// followed).
func TestTreeRestoreSingleEntry(t *testing.T) {
	sb := newSandbox(t)
	root := hostile.Dir("", hostile.Dir("d", hostile.File("f", "content")))
	meta, payload := hostile.Encode(root)
	acc, err := pxar.NewAccessor(context.Background(), bytes.NewReader(meta), int64(len(meta)), bytes.NewReader(payload), int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := acc.LookupPath(context.Background(), "d/f")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(sb.target, "sub", "out")
	restoreOne := func(overwrite bool) error {
		_, err := Tree(context.Background(), acc, e, "d/f", out, TreeOptions{Overwrite: overwrite})
		return err
	}
	if err := restoreOne(false); err != nil {
		t.Fatal(err)
	}
	wantFile(t, out, "content")
	if err := restoreOne(false); err == nil || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("existing target: %v", err)
	}
	os.Remove(out)
	os.Symlink(filepath.Join(sb.outside, "victim"), out)
	before := sb.state(t)
	if err := restoreOne(false); err == nil {
		t.Fatal("a symlink target was taken without overwrite")
	}
	if err := restoreOne(true); err != nil {
		t.Fatal(err)
	}
	wantFile(t, out, "content")
	if after := sb.state(t); after != before {
		t.Fatalf("the restore changed what is outside its target:\n%s\n%s", before, after)
	}
}

// TestTreeRestoreTooDeep: directories nested deeper than maxDepth are a
// failed path, not a crash; the levels above are restored.
func TestTreeRestoreTooDeep(t *testing.T) {
	h := newHostileStore(t)
	before := openFDs(t)
	target := filepath.Join(t.TempDir(), "target")
	rep, err := h.restore(t, hostile.Deep(maxDepth+5, 1), target, false)
	if !errors.Is(err, ErrPartial) || len(rep.Failed) != 1 || !strings.Contains(rep.Failed[0].Err, "deeper than") {
		t.Fatalf("want one failure for the depth, got %v %+v", err, failedPaths(rep))
	}
	if rep.Dirs != maxDepth+1 {
		t.Fatalf("%d directories restored, want %d", rep.Dirs, maxDepth+1)
	}
	if after := openFDs(t); after > before {
		t.Fatalf("%d descriptors open after the restore, %d before", after, before)
	}
}
