package store

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/internal/fsutil"
	"golang.org/x/sys/unix"
)

// sweepFixture is a lazily created store with one prefix directory
// holding files of every kind, each with the atime and mtime given.
type sweepFixture struct {
	s   *Store
	dir string
}

func newSweepFixture(t *testing.T) *sweepFixture {
	t.Helper()
	s, err := CreateWith(filepath.Join(t.TempDir(), "store"), CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	dir := filepath.Join(s.Root(), chunkDir, "abcd")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return &sweepFixture{s: s, dir: dir}
}

func digestName(c byte) string { return "abcd" + strings.Repeat(string(c), 60) }

func (f *sweepFixture) file(t *testing.T, name string, atime, mtime time.Time) {
	t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte("data of "+name), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, atime, mtime); err != nil {
		t.Fatal(err)
	}
}

func (f *sweepFixture) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(f.dir, name))
	return err == nil
}

func (f *sweepFixture) open(t *testing.T) (*PrefixDir, map[string]ChunkEntry) {
	t.Helper()
	d, err := f.s.OpenPrefixDir(0xabcd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	list, err := d.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]ChunkEntry{}
	for _, e := range list {
		m[e.Name] = e
	}
	return d, m
}

func TestPrefixDirListKinds(t *testing.T) {
	f := newSweepFixture(t)
	now := time.Now()
	names := map[string]EntryKind{
		digestName('1'):                       EntryChunk,
		digestName('2') + ".0.bad":            EntryBad,
		digestName('3') + ".tmp_x1y2":         EntryTemp,
		AsideName(digestName('4')):            EntryAside,
		AsideName(digestName('5') + ".9.bad"): EntryAside,
	}
	for n := range names {
		f.file(t, n, now, now)
	}
	for _, n := range []string{"README", digestName('A'), digestName('6') + ".x.bad", ".gc", "." + digestName('7') + ".tmp_1.gc", digestName('8') + ".10.bad"} {
		f.file(t, n, now, now) // none of these is ever listed, so never removed
	}
	os.Symlink(filepath.Join(f.dir, digestName('1')), filepath.Join(f.dir, digestName('9')))
	os.Mkdir(filepath.Join(f.dir, digestName('b')), 0o700)
	_, got := f.open(t)
	if len(got) != len(names) {
		t.Errorf("listed %d entries, want %d: %v", len(got), len(names), got)
	}
	for n, k := range names {
		if got[n].Kind != k {
			t.Errorf("%s: kind %d, want %d", n, got[n].Kind, k)
		}
	}
	if e := got[AsideName(digestName('4'))]; e.Target() != digestName('4') {
		t.Errorf("aside target %q", e.Target())
	}
	if _, err := f.s.OpenPrefixDir(PrefixDirs); err == nil {
		t.Error("prefix directory 65536 opened")
	}
}

// A chunk still older than the cutoff goes; one touched since goes back.
func TestRemoveIfOlder(t *testing.T) {
	f := newSweepFixture(t)
	old, now := time.Now().Add(-48*time.Hour), time.Now()
	cut := now.Add(-time.Hour)
	f.file(t, digestName('1'), old, old)
	f.file(t, digestName('2'), now, old)
	d, m := f.open(t)
	if res, size, err := d.RemoveIfOlder(m[digestName('1')], cut); err != nil || res != Removed || size != int64(len("data of "+digestName('1'))) {
		t.Errorf("old chunk: %v %d %v", res, size, err)
	}
	if res, _, err := d.RemoveIfOlder(m[digestName('2')], cut); err != nil || res != KeptTouched {
		t.Errorf("new chunk: %v %v", res, err)
	}
	if f.exists(digestName('1')) || !f.exists(digestName('2')) || f.exists(AsideName(digestName('2'))) {
		t.Error("wrong files left")
	}
	if res, _, err := d.RemoveIfOlder(m[digestName('1')], cut); err != nil || res != Gone {
		t.Errorf("vanished chunk: %v %v", res, err)
	}
}

// The race the rename closes: a writer in another process touches the
// chunk after the sweep listed it as old. Touched before the rename, the
// re-check sees it and puts it back; a writer that stores a new copy
// under the name meanwhile keeps its copy.
func TestRemoveIfOlderRace(t *testing.T) {
	f := newSweepFixture(t)
	old := time.Now().Add(-48 * time.Hour)
	cut := time.Now().Add(-time.Hour)
	f.file(t, digestName('1'), old, old)
	f.file(t, digestName('2'), old, old)
	d, m := f.open(t)

	// touched between the listing and the rename
	fsutil.TouchNoFollow(filepath.Join(f.dir, digestName('1')))
	if res, _, err := d.RemoveIfOlder(m[digestName('1')], cut); err != nil || res != KeptTouched || !f.exists(digestName('1')) {
		t.Errorf("touched before the rename: %v %v", res, err)
	}

	// touched after the rename: the touch finds nothing, the writer
	// stores the chunk anew, and the sweep removes only its old copy
	f.file(t, digestName('3'), old, old)
	_, m = f.open(t)
	d.afterAside = func(name string) {
		if err := fsutil.TouchNoFollow(filepath.Join(f.dir, name)); !os.IsNotExist(err) {
			t.Errorf("touch after the rename: %v, want ENOENT", err)
		}
		f.file(t, name, time.Now(), time.Now())
	}
	if res, _, err := d.RemoveIfOlder(m[digestName('3')], cut); err != nil || res != Removed || !f.exists(digestName('3')) {
		t.Errorf("stored anew after the rename: %v %v, exists %v", res, err, f.exists(digestName('3')))
	}

	// touched through the renamed file's other name (a writer that
	// looked the path up before the rename): re-checked and put back,
	// or dropped when a new copy took the name
	d.afterAside = func(name string) {
		fsutil.TouchNoFollow(filepath.Join(f.dir, AsideName(name)))
		f.file(t, name, time.Now(), time.Now())
	}
	if res, _, err := d.RemoveIfOlder(m[digestName('2')], cut); err != nil || res != KeptReplaced || !f.exists(digestName('2')) || f.exists(AsideName(digestName('2'))) {
		t.Errorf("touched and replaced: %v %v", res, err)
	}
	d.afterAside = nil
}

func TestRecoverAsideAndTemp(t *testing.T) {
	f := newSweepFixture(t)
	old, now := time.Now().Add(-48*time.Hour), time.Now()
	cut := now.Add(-time.Hour)
	f.file(t, AsideName(digestName('1')), old, old) // unused: goes
	f.file(t, AsideName(digestName('2')), now, old) // marked: back
	f.file(t, AsideName(digestName('3')), now, old) // marked, but a new copy exists
	f.file(t, digestName('3'), now, now)
	f.file(t, digestName('4')+".tmp_dead", now, old) // atime is not what counts for a temp file
	f.file(t, digestName('5')+".tmp_live", old, now)
	f.file(t, digestName('6'), old, old)
	f.file(t, AsideName(digestName('6')), now, now) // a leftover holds the hidden name
	d, m := f.open(t)
	for n, want := range map[string]RemoveResult{
		AsideName(digestName('1')): Removed, AsideName(digestName('2')): KeptTouched, AsideName(digestName('3')): KeptReplaced,
	} {
		if res, _, err := d.RecoverAside(m[n], cut); err != nil || res != want {
			t.Errorf("%s: %v %v, want %v", n, res, err, want)
		}
	}
	// temp files: by their change time, which chmod/rename move too; the
	// fixture's ctime is now, so only a cutoff in the future removes one
	if ok, err := d.RemoveTemp(m[digestName('4')+".tmp_dead"], now.Add(time.Minute)); !ok || err != nil {
		t.Errorf("dead temp: %v %v", ok, err)
	}
	if ok, err := d.RemoveTemp(m[digestName('5')+".tmp_live"], cut); ok || err != nil {
		t.Errorf("live temp: %v %v", ok, err)
	}
	if res, _, err := d.RemoveIfOlder(m[digestName('6')], cut); res != Busy || err != nil || !f.exists(digestName('6')) {
		t.Errorf("hidden name taken: %v %v", res, err)
	}
	if _, _, err := d.RemoveIfOlder(m[digestName('5')+".tmp_live"], cut); err == nil {
		t.Error("RemoveIfOlder took a temporary file")
	}
	for n, want := range map[string]bool{digestName('1'): false, digestName('2'): true, digestName('3'): true,
		AsideName(digestName('3')): false, digestName('4') + ".tmp_dead": false, digestName('5') + ".tmp_live": true} {
		if f.exists(n) != want {
			t.Errorf("%s exists: %v, want %v", n, !want, want)
		}
	}
}

func TestCheckAtime(t *testing.T) {
	f := newSweepFixture(t)
	before := time.Now()
	got, err := f.s.CheckAtime()
	if err != nil {
		t.Fatal(err)
	}
	if got.Before(before.Add(-time.Second)) || got.After(time.Now().Add(time.Second)) {
		t.Errorf("atime %v, want about %v", got, before)
	}
	// a file system that ignores the touch
	_, err = f.s.checkAtime(func(int, string) error { return nil })
	if err == nil || !strings.Contains(err.Error(), ErrNoAtime.Error()) || !strings.Contains(err.Error(), atimeCheckName) {
		t.Errorf("ignored touch: %v", err)
	}
	// a symlink planted as the test file is not followed
	p := filepath.Join(f.s.Root(), chunkDir, atimeCheckName)
	os.Remove(p)
	os.Symlink("/etc/hostname", p)
	if _, err := f.s.CheckAtime(); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("symlink: %v", err)
	}
}

func TestSnapshotIndexFilesAndTouchMissing(t *testing.T) {
	f := newSweepFixture(t)
	snap := Snapshot{Group: Group{Type: TypeVM, ID: "1"}, Time: time.Unix(1700000000, 0)}
	dir := f.s.SnapshotPath(snap)
	os.MkdirAll(dir, 0o700)
	for _, n := range []string{"disk.img.fidx", "root.pxar.didx", ".x.fidx.tmp_1", "index.json.blob", ".y.didx"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	names, err := f.s.SnapshotIndexFiles(snap)
	if err != nil || strings.Join(names, ",") != "disk.img.fidx,root.pxar.didx" {
		t.Errorf("index files %v %v", names, err)
	}
	snap.Time = snap.Time.Add(time.Second)
	if _, err := f.s.SnapshotIndexFiles(snap); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing snapshot: %v", err)
	}
	old := time.Now().Add(-48 * time.Hour)
	f.file(t, digestName('1')+".3.bad", old, old)
	var d [32]byte
	for i := range d {
		d[i] = 0x11
	}
	d[0], d[1] = 0xab, 0xcd
	if found, err := f.s.TouchMissing(d); !found || err != nil {
		t.Fatalf("touch missing: %v %v", found, err)
	}
	var st unix.Stat_t
	unix.Stat(filepath.Join(f.dir, digestName('1')+".3.bad"), &st)
	if time.Unix(st.Atim.Sec, 0).Before(time.Now().Add(-time.Minute)) {
		t.Error(".bad copy of a missing chunk not touched")
	}
}

// FuzzEntryKind: no name panics the listing; what is listed as set
// aside names a chunk or .bad copy to put back; no listed name leaves
// the directory.
func FuzzEntryKind(f *testing.F) {
	for _, s := range []string{digestName('1'), digestName('2') + ".0.bad", digestName('3') + ".tmp_x", AsideName(digestName('4')),
		".gc", "..gc", ".", "", AsideName(digestName('5') + ".tmp_1"), digestName('6') + ".tmp_/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		k := EntryKindOf(name)
		if k != 0 && (strings.Contains(name, "/") || strings.Contains(name, "\x00")) {
			t.Fatalf("%q listed as %d", name, k)
		}
		if k == EntryAside {
			e := ChunkEntry{Name: name, Kind: k}
			if tk := EntryKindOf(e.Target()); tk != EntryChunk && tk != EntryBad {
				t.Fatalf("%q puts back as %q of kind %d", name, e.Target(), tk)
			}
		}
	})
}

// GC's touch does not follow a chunk that is a symbolic link.
func TestMarkChunkNoFollow(t *testing.T) {
	f := newSweepFixture(t)
	old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	outside := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(outside, []byte("x"), 0o600)
	os.Chtimes(outside, old, old)
	var d [32]byte
	d[0], d[1] = 0xab, 0xcd
	if err := os.Symlink(outside, filepath.Join(f.dir, hex.EncodeToString(d[:]))); err != nil {
		t.Fatal(err)
	}
	if err := f.s.MarkChunk(d); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(outside, &st); err != nil {
		t.Fatal(err)
	}
	if got := time.Unix(st.Atim.Sec, 0); !got.Equal(old) {
		t.Errorf("the link's target was touched: atime %v", got)
	}
	d[2] = 1
	if err := f.s.MarkChunk(d); !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing chunk: %v", err)
	}
}

// A prefix directory holding more entries than one getdents buffer
// takes is listed whole.
func TestPrefixDirListLarge(t *testing.T) {
	f := newSweepFixture(t)
	const n = 3000 // ~100 KiB of 64-hex names: several 32 KiB reads
	for i := range n {
		name := "abcd" + hex.EncodeToString([]byte{byte(i >> 8), byte(i)}) + strings.Repeat("0", 56)
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		c, err := f.s.OpenChunkDir()
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.Prefix(0xabcd)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.List(nil)
		d.Close()
		c.Close()
		if err != nil || len(got) != n {
			t.Fatalf("%d entries, %v; want %d", len(got), err, n)
		}
	}
}
