package fs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// getdents lists dir from offset from (lseek, as seekdir does) with
// getdents64 in small buffers, returning each entry's name and d_off
// (telldir after it).
func getdents(dir string, from int64) (names []string, offs []int64, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fd := int(f.Fd())
	if _, err := unix.Seek(fd, from, 0); err != nil {
		return nil, nil, err
	}
	buf := make([]byte, 512) // about 20 entries: many calls per reply of the mount
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil || n == 0 {
			return names, offs, err
		}
		for b := buf[:n]; len(b) > 0; {
			reclen := binary.NativeEndian.Uint16(b[16:])
			name := b[19:reclen]
			names = append(names, string(name[:bytes.IndexByte(name, 0)]))
			offs = append(offs, int64(binary.NativeEndian.Uint64(b[8:])))
			b = b[reclen:]
		}
	}
}

// TestReaddirSeek lists a 9,000-entry directory of a file archive through
// the mount in small getdents calls, then resumes listings at offsets
// d_off gave (telldir/seekdir) at the start, in the middle and at the end,
// with the kernel's caches dropped before each so that the mount, not the
// kernel's copy of the listing, answers: each must go on with the entry
// after the one whose offset it was. An offset that is no entry's of the
// directory (one inside an entry, one of another directory) fails with
// EINVAL.
func TestReaddirSeek(t *testing.T) {
	const per = 9000
	s, snap := manyFilesArchive(t, 2, per)
	_, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
	root := filepath.Join(mnt, snap.String(), "root.pxar")
	dir := filepath.Join(root, "d000")
	names, offs, err := getdents(dir, 0)
	if err != nil || len(names) != per || !slices.IsSorted(names) {
		t.Fatalf("listed %d names (sorted %v): %v", len(names), slices.IsSorted(names), err)
	}
	dropCaches := func() {
		t.Helper()
		if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
			t.Fatal(err)
		}
	}
	seeks := readdirSeeks.Load()
	for _, k := range []int{0, 1, 19, 20, per / 2, per - 2, per - 1} {
		dropCaches()
		got, gotOffs, err := getdents(dir, offs[k])
		if err != nil || !slices.Equal(got, names[k+1:]) || !slices.Equal(gotOffs, offs[k+1:]) {
			t.Fatalf("resumed after entry %d (offset %d): %d names from %q, %v; want %d", k, offs[k], len(got), first(got), err, per-k-1)
		}
	}
	if readdirSeeks.Load() == seeks {
		t.Error("no listing was resumed by the mount: the kernel answered every seek from its cache")
	}
	_, other, err := getdents(filepath.Join(root, "d001"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []int64{offs[per/2] + 1, other[per/2]} {
		if slices.Contains(offs, bad) {
			continue
		}
		dropCaches()
		if got, _, err := getdents(dir, bad); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("listing from offset %d, no entry's: %d names from %q, %v, want EINVAL", bad, len(got), first(got), err)
		}
	}
}

func first(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}
