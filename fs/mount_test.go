package fs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

// TestMountShowsStore lists, stats and reads every entry of a mount of
// the whole store and compares it with what was backed up.
func TestMountShowsStore(t *testing.T) {
	f := testFixture(t)
	_, mnt, _ := mountT(t, Options{})

	var files, links []string
	err := filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(mnt, p)
		switch {
		case rel == statsName:
		case d.Type()&fs.ModeSymlink != 0:
			links = append(links, rel)
		case d.Type().IsRegular():
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	checkSameSet(t, "files", files, keys(f.files))
	checkSameSet(t, "latest links", links, keys(f.links))

	for rel, want := range f.files {
		p := filepath.Join(mnt, rel)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("stat %s: %v", rel, err)
		}
		if fi.Mode() != DefaultImageMode || fi.Size() != int64(len(want)) {
			t.Errorf("%s: mode %v size %d, want -r-------- size %d", rel, fi.Mode(), fi.Size(), len(want))
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read %s: %v", rel, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: content differs from the backed-up data (%d vs %d bytes)", rel, len(got), len(want))
		}
	}
	for rel, want := range f.links {
		got, err := os.Readlink(filepath.Join(mnt, rel))
		if err != nil || got != want {
			t.Errorf("readlink %s = %q, %v; want %q", rel, got, err, want)
		}
	}
	snap := f.snaps["vm/100/2024-01-01T01:00:00Z"]
	fi, err := os.Stat(filepath.Join(mnt, snap.String()))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o555 || !fi.ModTime().Equal(snap.Time) {
		t.Errorf("snapshot dir: %v, %v; want a dir r-xr-xr-x with the snapshot's time", fi, err)
	}
}

// TestInodesStable checks that inode numbers are distinct per path and
// the same in a second mount.
func TestInodesStable(t *testing.T) {
	f := testFixture(t)
	_, mnt1, _ := mountT(t, Options{})
	_, mnt2, _ := mountT(t, Options{})
	seen := map[uint64]string{}
	paths := append(keys(f.files), "vm", "vm/100", "ns/prod", "ns/prod/ct/200")
	for _, rel := range paths {
		a, b := ino(t, filepath.Join(mnt1, rel)), ino(t, filepath.Join(mnt2, rel))
		if a != b {
			t.Errorf("%s: inode %d in one mount, %d in another", rel, a, b)
		}
		if other, dup := seen[a]; dup {
			t.Errorf("%s and %s share inode %d", rel, other, a)
		}
		seen[a] = rel
	}
}

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatalf("stat %s: %v", p, err)
	}
	return st.Ino
}

// TestScope mounts parts of the store.
func TestScope(t *testing.T) {
	f := testFixture(t)
	vm100 := store.Group{Type: "vm", ID: "100"}
	db := f.snaps["ns/prod/ns/db/host/db1/2024-01-01T02:00:00Z"]
	tests := []struct {
		name  string
		scope Scope
		root  []string
		file  string // a file below the root, and its store path
		store string
	}{
		{"namespace", Scope{NS: "prod"}, []string{".stats", "ct", "ns"},
			"ns/db/host/db1/2024-01-01T02:00:00Z/data.img", "ns/prod/ns/db/host/db1/2024-01-01T02:00:00Z/data.img"},
		{"group", Scope{Group: &vm100}, []string{".stats", "2024-01-01T00:00:00Z", "2024-01-01T01:00:00Z", "latest"},
			"latest/efi.img", "vm/100/2024-01-01T01:00:00Z/efi.img"},
		{"snapshot", Scope{Snapshot: &db}, []string{".stats", "data.img", "notes.blob"},
			"notes.blob", db.String() + "/notes.blob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, mnt, _ := mountT(t, Options{Scope: tt.scope})
			if got := readNames(t, mnt); !slices.Equal(got, tt.root) {
				t.Errorf("root lists %q, want %q", got, tt.root)
			}
			got, err := os.ReadFile(filepath.Join(mnt, tt.file))
			if err != nil || !bytes.Equal(got, f.files[tt.store]) {
				t.Errorf("read %s: %v, content equal: %v", tt.file, err, bytes.Equal(got, f.files[tt.store]))
			}
		})
	}
}

func readNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("readdir %s: %v", dir, err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestLatestMoves backs up while mounted: the unfinished snapshot stays
// hidden, the finished one appears and latest moves to it.
func TestLatestMoves(t *testing.T) {
	f := testFixture(t)
	g := newGroup("latest")
	first, err := f.backup(snapSpec{g: g, at: t0, images: map[string][]byte{"disk.img": randomData(30, 70000)}})
	if err != nil {
		t.Fatal(err)
	}
	_, mnt, _ := mountT(t, Options{Refresh: time.Nanosecond})
	latest := filepath.Join(mnt, g.String(), "latest")
	if got, _ := os.Readlink(latest); got != first.TimeString() {
		t.Fatalf("latest = %q, want %q", got, first.TimeString())
	}

	b, err := f.s.StartBackup(t.Context(), g, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	second := b.Snapshot()
	data := randomData(31, 90000)
	if err := f.addImage(t.Context(), b, "disk.img", data); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	if got := readNames(t, filepath.Join(mnt, g.String())); !slices.Equal(got, []string{first.TimeString(), "latest"}) {
		t.Errorf("while the backup runs the group lists %q", got)
	}
	if got, _ := os.Readlink(latest); got != first.TimeString() {
		t.Errorf("latest moved to %q before the backup finished", got)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	f.files[second.String()+"/disk.img"] = data
	f.links[g.String()+"/latest"] = second.TimeString()

	// The kernel may serve its cached entry and target for one clock
	// tick more (its shortest entry timeout).
	waitLink(t, latest, second.TimeString())
	if got := readNames(t, filepath.Join(mnt, g.String())); !slices.Equal(got, []string{first.TimeString(), second.TimeString(), "latest"}) {
		t.Errorf("after the backup the group lists %q", got)
	}
	got, err := os.ReadFile(filepath.Join(latest, "disk.img"))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("read latest/disk.img: %v (content equal %v)", err, bytes.Equal(got, data))
	}
}

// TestReadOnly checks that nothing can be changed through the mount.
func TestReadOnly(t *testing.T) {
	forModes(t, func(t *testing.T, one bool) {
		_, mnt, _ := mountT(t, Options{OneMount: one})
		checkReadOnly(t, mnt)
	})
}

func checkReadOnly(t *testing.T, mnt string) {
	file := filepath.Join(mnt, "vm/100/latest/disk.img")
	dir := filepath.Join(mnt, "vm/100/2024-01-01T00:00:00Z")
	tests := []struct {
		name string
		op   func() error
	}{
		{"open for writing", func() error { return openClose(file, os.O_WRONLY) }},
		{"open read-write", func() error { return openClose(file, os.O_RDWR) }},
		{"truncate", func() error { return os.Truncate(file, 0) }},
		{"create", func() error { return openClose(filepath.Join(dir, "new"), os.O_CREATE|os.O_WRONLY) }},
		{"create at root", func() error { return openClose(filepath.Join(mnt, "new"), os.O_CREATE|os.O_RDONLY) }},
		{"mkdir", func() error { return os.Mkdir(filepath.Join(dir, "d"), 0o755) }},
		{"rename", func() error { return os.Rename(file, filepath.Join(dir, "x.img")) }},
		{"rename snapshot", func() error { return os.Rename(dir, filepath.Join(mnt, "vm/100/x")) }},
		{"remove file", func() error { return os.Remove(filepath.Join(dir, "disk.img")) }},
		{"remove dir", func() error { return os.Remove(dir) }},
		{"symlink", func() error { return os.Symlink("x", filepath.Join(dir, "l")) }},
		{"link", func() error { return os.Link(file, filepath.Join(dir, "h")) }},
		{"chmod", func() error { return os.Chmod(file, 0o644) }},
		{"setxattr", func() error { return syscall.Setxattr(file, "user.x", []byte("1"), 0) }},
	}
	for _, tt := range tests {
		if err := tt.op(); !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s: %v, want EROFS", tt.name, err)
		}
	}
}

func openClose(p string, flags int) error {
	fh, err := os.OpenFile(p, flags, 0o644)
	if err == nil {
		fh.Close()
	}
	return err
}

// TestStats reads a file and checks the counters in .stats, which must
// be new at each read (never a page the kernel kept).
func TestStats(t *testing.T) { forModes(t, testStats) }

func testStats(t *testing.T, one bool) {
	f := testFixture(t)
	srv, mnt, _ := mountT(t, Options{OneMount: one})
	if before := readStats(t, mnt); before.ServedBytes != 0 {
		t.Errorf(".stats of a fresh mount: %+v", before)
	}
	rel := "vm/100/2024-01-01T00:00:00Z/disk.img"
	for range 2 {
		if _, err := os.ReadFile(filepath.Join(mnt, rel)); err != nil {
			t.Fatal(err)
		}
	}
	st := readStats(t, mnt)
	size := int64(len(f.files[rel]))
	if st.ServedBytes < size || st.CacheMisses == 0 || st.LoadedBytes == 0 || st.ZeroHits == 0 || st.DecodedBytes < size-256<<10 {
		t.Errorf(".stats after reading %d bytes (with a zero run): %+v", size, st)
	}
	if now := srv.Stats(); now.ServedBytes < st.ServedBytes || now.CacheMisses < st.CacheMisses {
		t.Errorf("Stats() = %+v went back from .stats %+v", now, st)
	}
}

func readStats(t *testing.T, mnt string) Stats {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(mnt, statsName))
	if err != nil {
		t.Fatalf("read .stats: %v", err)
	}
	var st Stats
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf(".stats is not JSON: %v\n%s", err, data)
	}
	if fi, err := os.Stat(filepath.Join(mnt, statsName)); err != nil || fi.Size() != int64(len(data)) {
		t.Fatalf(".stats: stat says %v (%v), read %d bytes", fi.Size(), err, len(data))
	}
	return st
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func checkSameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s in the mount:\n%q\nwant:\n%q", what, got, want)
	}
}
