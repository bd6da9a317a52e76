package fs

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/fs/layout"
)

// forgetDeadline bounds the waits for a removal to show in the mount: it
// shows within Refresh (2 s) and an entry timeout of the same; the bound
// is generous so that a loaded machine does not fail the test.
const forgetDeadline = 30 * time.Second

// TestForgottenSnapshotLeaves removes snapshots under a mount with the
// default refresh and kernel timeouts: a forgotten snapshot stops
// resolving (by path, without anybody listing its group), latest moves
// back, the listing drops it, a file opened before keeps reading the
// forgotten snapshot's data, and a forgotten group leaves too.
func TestForgottenSnapshotLeaves(t *testing.T) { forModes(t, testForgottenSnapshotLeaves) }

func testForgottenSnapshotLeaves(t *testing.T, one bool) {
	f := testFixture(t)
	g := newGroup("forget")
	data1 := randomData(51, 300000)
	data2 := randomData(52, 16<<20, 1<<20, 1<<20) // larger than the kernel reads ahead
	first, err := f.backup(snapSpec{g: g, at: t0, images: map[string][]byte{"disk.img": data1}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.backup(snapSpec{g: g, at: t0.Add(time.Hour), images: map[string][]byte{"disk.img": data2}})
	if err != nil {
		t.Fatal(err)
	}
	srv, mnt, _ := mountT(t, Options{OneMount: one})
	gdir := filepath.Join(mnt, g.String())
	latest := filepath.Join(gdir, layout.Latest)
	secondDir := filepath.Join(gdir, second.TimeString())
	if got := readNames(t, gdir); !slices.Equal(got, []string{first.TimeString(), second.TimeString(), layout.Latest}) {
		t.Fatalf("group lists %q", got)
	}
	if got, _ := os.Readlink(latest); got != second.TimeString() {
		t.Fatalf("latest = %q, want %q", got, second.TimeString())
	}
	fh, err := os.Open(filepath.Join(secondDir, "disk.img"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	head := make([]byte, 64<<10)
	if _, err := fh.ReadAt(head, 0); err != nil || !bytes.Equal(head, data2[:len(head)]) {
		t.Fatalf("read before forget: %v", err)
	}

	if err := f.s.ForgetSnapshot(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	delete(f.files, second.String()+"/disk.img")
	f.links[g.String()+"/"+layout.Latest] = first.TimeString()
	// By path alone: the kernel's cached entry must expire, not wait for
	// a listing of the group to invalidate it.
	waitGone(t, secondDir)
	if got, _ := os.Readlink(latest); got != first.TimeString() {
		t.Errorf("latest = %q after forgetting %s, want %q", got, second.TimeString(), first.TimeString())
	}
	if got := readNames(t, gdir); !slices.Equal(got, []string{first.TimeString(), layout.Latest}) {
		t.Errorf("after forget the group lists %q", got)
	}
	if got, err := os.ReadFile(filepath.Join(latest, "disk.img")); err != nil || !bytes.Equal(got, data1) {
		t.Errorf("read latest/disk.img: %v (content equal %v)", err, bytes.Equal(got, data1))
	}

	// The file opened before keeps reading, through the mount: most of
	// it was never in the page cache.
	served := srv.Stats().ServedBytes
	rest := make([]byte, len(data2)-len(head))
	if n, err := fh.ReadAt(rest, int64(len(head))); err != nil || n != len(rest) || !bytes.Equal(rest, data2[len(head):]) {
		t.Fatalf("read of the open file after forget: %d bytes, %v (content equal %v)", n, err, bytes.Equal(rest, data2[len(head):]))
	}
	if got, least := srv.Stats().ServedBytes-served, int64(len(rest)-8<<20); got < least {
		t.Errorf("the mount served %d bytes of the open file after forget, want at least %d (not all from the page cache)", got, least)
	}

	if _, err := f.s.ForgetGroup(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	delete(f.files, first.String()+"/disk.img")
	delete(f.links, g.String()+"/"+layout.Latest)
	waitGone(t, gdir)
	if slices.Contains(readNames(t, filepath.Dir(gdir)), g.ID) {
		t.Errorf("%s still listed after its group was forgotten", g.ID)
	}
}

// waitGone polls path (lstat only) until it does not exist.
func waitGone(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(forgetDeadline); ; time.Sleep(50 * time.Millisecond) {
		_, err := os.Lstat(path)
		if errors.Is(err, iofs.ErrNotExist) {
			return
		}
		if err != nil {
			t.Fatalf("lstat %s: %v", path, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still there %s after it was forgotten", path, forgetDeadline)
		}
	}
}

// TestForgottenGroupScope: a mount of one group shows it empty (but for
// .stats) once the group is forgotten, not the last listing it had.
func TestForgottenGroupScope(t *testing.T) {
	f := testFixture(t)
	g := newGroup("forgetscope")
	snap, err := f.backup(snapSpec{g: g, at: t0, images: map[string][]byte{"disk.img": randomData(53, 70000)}})
	if err != nil {
		t.Fatal(err)
	}
	_, mnt, _ := mountT(t, Options{Scope: Scope{Group: &g}})
	if got := readNames(t, mnt); !slices.Contains(got, snap.TimeString()) {
		t.Fatalf("group mount lists %q", got)
	}
	if _, err := f.s.ForgetGroup(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	delete(f.files, snap.String()+"/disk.img")
	delete(f.links, g.String()+"/"+layout.Latest)
	waitGone(t, filepath.Join(mnt, snap.TimeString()))
	for deadline := time.Now().Add(forgetDeadline); ; time.Sleep(50 * time.Millisecond) {
		got := readNames(t, mnt)
		if !slices.Contains(got, snap.TimeString()) && !slices.Contains(got, layout.Latest) {
			if !slices.Equal(got, []string{statsName}) {
				t.Errorf("the mount of a forgotten group lists %q, want only %s", got, statsName)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mount of forgotten group %s still lists %q", g, got)
		}
	}
}
