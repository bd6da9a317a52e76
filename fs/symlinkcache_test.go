package fs

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/cairnfs/cairn/fs/layout"
	"github.com/cairnfs/cairn/internal/logtest"
	"github.com/cairnfs/cairn/store/pxar"
)

// readlinks counts the READLINK requests in a debug mount's log.
func readlinks(logs *logtest.Buffer) int {
	return len(regexp.MustCompile(`rx \d+: READLINK `).FindAllString(logs.String(), -1))
}

// cachedReadlinks reads the link at p (and through it, when through is
// not "") a few times after a first read and checks the kernel asked for
// its target once (kernelCached: while no one drops caches).
func cachedReadlinks(t *testing.T, logs *logtest.Buffer, p, want, through string) {
	t.Helper()
	read := func() {
		if got, err := os.Readlink(p); err != nil || got != want {
			t.Fatalf("readlink %s = %q, %v; want %q", p, got, err, want)
		}
		if through != "" {
			if _, err := os.Stat(filepath.Join(p, through)); err != nil {
				t.Fatal(err)
			}
		}
	}
	read()
	if readlinks(logs) == 0 {
		t.Fatalf("no READLINK request in the log for %s", p)
	}
	sent := kernelCached(t, func() int64 {
		before := readlinks(logs)
		for range 20 {
			read()
		}
		return int64(readlinks(logs) - before)
	})
	if sent == 0 {
		return
	}
	t.Errorf("reading %s 20 times again sent %d READLINK requests, want 0 (cached target)", p, sent)
}

// TestLatestCached: latest's target is cached by the kernel
// (FUSE_CACHE_SYMLINKS): reading it, and a path through it, again sends
// no READLINK.
func TestLatestCached(t *testing.T) {
	f := testFixture(t)
	g := newGroup("cached")
	snap, err := f.backup(snapSpec{g: g, at: t0, images: map[string][]byte{"disk.img": randomData(32, 5000)}})
	if err != nil {
		t.Fatal(err)
	}
	_, mnt, logs := mountT(t, Options{Debug: true})
	cachedReadlinks(t, logs, filepath.Join(mnt, g.String(), layout.Latest), snap.TimeString(), "disk.img")
}

// TestLatestMovesCached: a cached latest follows a newer snapshot within
// the refresh interval: it is a new inode then, with no cached target.
func TestLatestMovesCached(t *testing.T) {
	f := testFixture(t)
	g := newGroup("moves")
	first, err := f.backup(snapSpec{g: g, at: t0, images: map[string][]byte{"disk.img": randomData(33, 5000)}})
	if err != nil {
		t.Fatal(err)
	}
	_, mnt, logs := mountT(t, Options{Debug: true, Refresh: 50 * time.Millisecond})
	latest := filepath.Join(mnt, g.String(), layout.Latest)
	cachedReadlinks(t, logs, latest, first.TimeString(), "")
	second, err := f.backup(snapSpec{g: g, at: t0.Add(time.Hour), images: map[string][]byte{"disk.img": randomData(34, 6000)}})
	if err != nil {
		t.Fatal(err)
	}
	waitLink(t, latest, second.TimeString())
	if st, err := os.Stat(filepath.Join(latest, "disk.img")); err != nil || st.Size() != 6000 {
		t.Errorf("latest/disk.img: %v, %v", st, err)
	}
	cachedReadlinks(t, logs, latest, second.TimeString(), "")
}

// TestArchiveSymlinkCached: a symlink inside a file archive (a slot of
// the node table) is asked for once.
func TestArchiveSymlinkCached(t *testing.T) {
	var meta, payload bytes.Buffer
	enc, err := pxar.NewEncoder(&meta, &payload, pxMeta(pxar.ModeIFDIR|0o755, 1600000000))
	if err != nil {
		t.Fatal(err)
	}
	note := []byte("note\n")
	if _, err := enc.AddFile("note.txt", pxMeta(pxar.ModeIFREG|0o644, 1600000001), uint64(len(note)), bytes.NewReader(note)); err != nil {
		t.Fatal(err)
	}
	if err := enc.AddSymlink("sym", pxMeta(pxar.ModeIFLNK|0o777, 1600000002), "note.txt"); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	s, snap := splitArchiveStore(t, "sym", meta.Bytes(), payload.Bytes())
	_, mnt, logs := mountT(t, Options{Store: s, Trees: PxarTrees{}, Debug: true})
	sym := filepath.Join(mnt, snap.String(), "root.pxar", "sym")
	cachedReadlinks(t, logs, sym, "note.txt", "")
	if got, err := os.ReadFile(sym); err != nil || !bytes.Equal(got, note) {
		t.Errorf("through the symlink: %q, %v", got, err)
	}
}

// waitLink reads the link at p until it points to want, failing after ten
// seconds: a moved latest is seen once the kernel's cached entry expires
// (Refresh, and at least one clock tick of the kernel).
func waitLink(t *testing.T, p, want string) {
	t.Helper()
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got, _ = os.Readlink(p); got == want {
			return
		}
	}
	t.Fatalf("%s = %q, want %q", p, got, want)
}
