package test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestMountForget: `cairn forget` under a running `cairn mount` (the
// real binaries, default refresh and timeouts): the forgotten snapshot
// leaves the mount, by path and in the listing, latest moves back, a
// file opened before keeps reading, and a forgotten group leaves too.
func TestMountForget(t *testing.T) {
	st := e2e.SharedStore(t)
	s := e2e.BackupsOf(t, st, "mountforget", 2)
	mnt := e2e.MountStore(t, st)
	gdir := filepath.Join(mnt, "host", "mountforget")
	name := func(snap string) string { return filepath.Base(snap) }
	if got := e2e.Names(t, gdir); !slices.Equal(got, []string{name(s[0]), name(s[1]), "latest"}) {
		t.Fatalf("mount lists %q", got)
	}
	fh, err := os.Open(filepath.Join(gdir, "latest", "d.img"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	want := e2e.RandBytes(200000, 101) // s[1]'s image
	head := make([]byte, 4096)
	if _, err := fh.ReadAt(head, 0); err != nil || !bytes.Equal(head, want[:4096]) {
		t.Fatalf("read before forget: %v", err)
	}

	e2e.MustCairn(t, "--store", st, "forget", s[1])
	waitAbsent(t, filepath.Join(gdir, name(s[1])))
	if got, _ := os.Readlink(filepath.Join(gdir, "latest")); got != name(s[0]) {
		t.Errorf("latest = %q after forget, want %q", got, name(s[0]))
	}
	if got := e2e.Names(t, gdir); !slices.Equal(got, []string{name(s[0]), "latest"}) {
		t.Errorf("after forget the mount lists %q", got)
	}
	rest := make([]byte, len(want)-len(head))
	if n, err := fh.ReadAt(rest, int64(len(head))); n != len(rest) || !bytes.Equal(rest, want[len(head):]) {
		t.Errorf("the file opened before forget: %d bytes, %v", n, err)
	}
	got, err := os.ReadFile(filepath.Join(gdir, "latest", "d.img"))
	if err != nil || !bytes.Equal(got, e2e.RandBytes(200000, 100)) {
		t.Errorf("latest/d.img after forget: %v", err)
	}

	e2e.MustCairn(t, "--store", st, "forget", "--group", "host/mountforget")
	waitAbsent(t, gdir)
	// host/ lists the other tests' groups, or is gone with the last one
	if es, err := os.ReadDir(filepath.Join(mnt, "host")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("list host/: %v", err)
	} else if slices.ContainsFunc(es, func(e os.DirEntry) bool { return e.Name() == "mountforget" }) {
		t.Errorf("forgotten group still listed in host/")
	}
}

// waitAbsent polls (lstat only) until path does not exist, for at most
// a generous minute: the mount shows a removal within seconds.
func waitAbsent(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		_, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil && !strings.Contains(err.Error(), "no such") {
			t.Fatalf("lstat %s: %v", path, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still in the mount a minute after forget", path)
		}
	}
}
