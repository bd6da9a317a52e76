package dirent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func open(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// A real directory: every name once, "." and ".." left out, d_ino the
// inode lstat gives, d_type the file's type; a buffer smaller than the
// directory takes several getdents calls.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 300 {
		name := fmt.Sprintf("file-%03d-%s", i, strings.Repeat("x", i%40))
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	want = append(want, "d", "l")
	if err := os.Mkdir(dir+"/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", dir+"/l"); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{0, 512} {
		buf := make([]byte, size)
		ents, err := Read(open(t, dir), &buf)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name)
			var st syscall.Stat_t
			if err := syscall.Lstat(filepath.Join(dir, e.Name), &st); err != nil {
				t.Fatal(err)
			}
			typ := map[uint32]uint8{unix.S_IFREG: unix.DT_REG, unix.S_IFDIR: unix.DT_DIR, unix.S_IFLNK: unix.DT_LNK}[st.Mode&unix.S_IFMT]
			if e.Ino != st.Ino || (e.Type != typ && e.Type != unix.DT_UNKNOWN) {
				t.Errorf("%s: ino %d type %d, lstat says %d, %d", e.Name, e.Ino, e.Type, st.Ino, typ)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("buffer %d: %d names, want %d", size, len(got), len(want))
		}
	}
}

// rec is one linux_dirent64 record.
func rec(ino uint64, reclen uint16, name string) []byte {
	b := make([]byte, 19, max(int(reclen), 19))
	binary.NativeEndian.PutUint64(b, ino)
	binary.NativeEndian.PutUint16(b[16:], reclen)
	b[18] = unix.DT_REG
	b = append(b, name...)
	for len(b) < int(reclen) {
		b = append(b, 0)
	}
	return b[:max(int(reclen), 19)]
}

// Records as a hostile or broken file system could return them: the
// entries before the bad record and ErrMalformed, never a panic or a
// record read past the buffer.
func TestParseHostile(t *testing.T) {
	good := slices.Concat(rec(7, 24, "."), rec(8, 24, ".."), rec(9, 40, "2024-01-01T00:00:00Z"))
	ents, err := Parse(good, nil)
	if err != nil || len(ents) != 1 || ents[0] != (Entry{Name: "2024-01-01T00:00:00Z", Ino: 9, Type: unix.DT_REG}) {
		t.Fatalf("%+v, %v", ents, err)
	}
	for name, b := range map[string][]byte{
		"short header":        rec(1, 24, "a")[:10],
		"reclen 0":            append(rec(1, 24, "a")[:16], 0, 0, 0, 0, 0, 0, 0, 0),
		"reclen under header": rec(1, 18, ""),
		"reclen beyond":       rec(1, 24, "a")[:20],
		"after a good one":    slices.Concat(rec(9, 24, "ok"), rec(1, 64, "a")[:30]),
	} {
		ents, err := Parse(b, nil)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
		if name == "after a good one" && (len(ents) != 1 || ents[0].Name != "ok") {
			t.Errorf("%s: %+v", name, ents)
		}
	}
	// A name without its NUL runs to the record's end, and an empty one
	// is left out.
	if ents, err := Parse(slices.Concat(rec(3, 21, "ab"), rec(4, 24, "")), nil); err != nil || len(ents) != 1 || ents[0].Name != "ab" {
		t.Errorf("%+v, %v", ents, err)
	}
}
