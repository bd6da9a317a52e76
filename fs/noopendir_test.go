package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

// TestNoOpendir lists directories of a file archive larger than one
// READDIRPLUS reply, each read with small getdents buffers (so the kernel
// asks again from inside a reply), several at once with one listing kept
// open at most (so listings are closed between their requests and
// resumed by seeking): every listing must be whole and in order. The
// store mount sends no OPENDIR or RELEASEDIR, and a second listing comes
// from the kernel's cache; the changing lists still change.
func TestNoOpendir(t *testing.T) {
	const dirs, per = 3, 9000 // 9,000 entries: about 1.4 MB of READDIRPLUS reply
	s, snap := manyFilesArchive(t, dirs, per)
	old := maxKeptDirs
	maxKeptDirs = 1
	t.Cleanup(func() { maxKeptDirs = old })
	_, mnt, logs := mountT(t, Options{Store: s, Trees: PxarTrees{}, Debug: true, Refresh: 20 * time.Millisecond})
	root := filepath.Join(mnt, snap.String(), "root.pxar")
	want := make([]string, per)
	for f := range per {
		want[f] = fmt.Sprintf("file%04d.go", f)
	}
	list := func(d int) error {
		f, err := os.Open(filepath.Join(root, fmt.Sprintf("d%03d", d)))
		if err != nil {
			return err
		}
		defer f.Close()
		var got []string
		for {
			names, err := f.Readdirnames(7) // a few at a time from Go's 8 KiB buffer
			got = append(got, names...)
			if err != nil || len(names) == 0 {
				break
			}
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("d%03d: %d names, want %d in order", d, len(got), len(want))
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, dirs)
	for d := range dirs {
		wg.Go(func() { errs[d] = list(d) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// The first opens send OPENDIR (answered ENOSYS), the next none.
	opens := regexp.MustCompile(`rx \d+: (OPENDIR|RELEASEDIR) `)
	count := func() int { return len(opens.FindAllString(logs.String(), -1)) }
	if n := count(); n > dirs {
		t.Errorf("%d OPENDIR or RELEASEDIR requests for %d directories opened at once, want at most %d", n, dirs, dirs)
	}
	// Listed again, from the kernel's cache (kernelCached: while no one
	// drops caches).
	var made, sent int64
	n := kernelCached(t, func() int64 {
		before, opened := readdirs.Load(), count()
		for d := range dirs {
			if err := list(d); err != nil {
				t.Error(err)
			}
		}
		made, sent = readdirs.Load()-before, int64(count()-opened)
		return made + sent
	})
	if n != 0 && made != 0 {
		t.Errorf("listing again made %d listings, want 0 (kernel cache)", made)
	}
	if n != 0 && sent != 0 {
		t.Errorf("listing again sent %d OPENDIR or RELEASEDIR requests, want 0", sent)
	}

	// the changing lists: a new snapshot appears, a forgotten one goes
	group := filepath.Join(mnt, snap.Group.String())
	if got := readNames(t, group); !slices.Contains(got, snap.TimeString()) {
		t.Fatalf("group lists %q", got)
	}
	b, err := s.StartBackup(t.Context(), snap.Group, snap.Time.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	if err := addDynamic(s, b, "x.img.didx", randomData(3, 5000)); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	second := b.Snapshot()
	waitNames(t, group, func(got []string) bool { return slices.Contains(got, second.TimeString()) })
	if err := s.ForgetSnapshot(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	waitNames(t, group, func(got []string) bool { return !slices.Contains(got, second.TimeString()) })
}

// waitNames lists dir until ok holds for its names (a changing list is
// stale for up to the mount's Refresh), failing after ten seconds.
func waitNames(t *testing.T, dir string, ok func([]string) bool) {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got = readNames(t, dir); ok(got) {
			return
		}
	}
	t.Errorf("%s lists %q", dir, got)
}

// TestNoOpendirForget: the kernel forgets a directory whose listing was
// left half read (its handle kept), then another listing pushes that
// handle out: it is released with the node (a handle of a forgotten
// node must neither linger nor fail), and the directory lists whole
// afterwards.
func TestNoOpendirForget(t *testing.T) {
	const per = 9000
	s, snap := manyFilesArchive(t, 2, per)
	old := maxKeptDirs
	maxKeptDirs = 1
	t.Cleanup(func() { maxKeptDirs = old })
	srv, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
	root := filepath.Join(mnt, snap.String(), "root.pxar")
	half := func(dir string) {
		f, err := os.Open(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if names, err := f.Readdirnames(7); err != nil || len(names) != 7 {
			t.Fatalf("%s: %q (%v)", dir, names, err)
		}
	}
	half("d000")
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); srv.Stats().TreeEntries > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := srv.Stats().TreeEntries; n > 0 {
		t.Fatalf("the kernel still holds %d entries after drop_caches", n)
	}
	half("d001") // keeps its handle, releasing d000's
	for _, d := range []string{"d000", "d001"} {
		if n := len(readNames(t, filepath.Join(root, d))); n != per {
			t.Errorf("%s: %d names, want %d", d, n, per)
		}
	}
}
