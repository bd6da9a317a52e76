package restore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/pxar/walk"
	"golang.org/x/sys/unix"
)

// makeTree builds a source tree holding every entry kind the test can
// make here.
func makeTree(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "a", "b c", "d"), 0o750))
	must(os.WriteFile(filepath.Join(src, "a", "data.bin"), randBytes(300_000, 4), 0o640))
	must(os.WriteFile(filepath.Join(src, "a", "b c", "empty"), nil, 0o600))
	must(os.WriteFile(filepath.Join(src, "odd\nname \xff"), []byte("odd"), 0o644))
	sparse, err := os.Create(filepath.Join(src, "a", "sparse"))
	must(err)
	must(sparse.Truncate(8 << 20))
	_, err = sparse.WriteAt([]byte("end"), 8<<20-3)
	must(err)
	sparse.Close()
	must(os.Symlink("../a/data.bin", filepath.Join(src, "a", "b c", "link")))
	must(os.Link(filepath.Join(src, "a", "data.bin"), filepath.Join(src, "a", "b c", "d", "hard")))
	must(unix.Mkfifo(filepath.Join(src, "fifo"), 0o640))
	// modes a create alone does not give: read-only, none, beyond the umask
	must(os.WriteFile(filepath.Join(src, "a", "ro"), []byte("ro"), 0o444))
	must(os.WriteFile(filepath.Join(src, "a", "none"), []byte("none"), 0))
	must(os.WriteFile(filepath.Join(src, "a", "rw-all"), []byte("rw"), 0o666))
	must(os.Chmod(filepath.Join(src, "a", "rw-all"), 0o666))
	unix.Setxattr(filepath.Join(src, "a", "data.bin"), "user.cairn", []byte("x1"), 0) // where supported
	if os.Geteuid() == 0 {
		must(unix.Mknod(filepath.Join(src, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
		must(unix.Mknod(filepath.Join(src, "sock"), unix.S_IFSOCK|0o600, 0))
		must(os.Lchown(filepath.Join(src, "a", "b c"), 1234, 5678))
		// set-id bits survive the chown that restores the owner
		suid := filepath.Join(src, "a", "suid")
		must(os.WriteFile(suid, []byte("#!/bin/true\n"), 0o755))
		must(os.Lchown(suid, 1234, 5678))
		must(unix.Chmod(suid, 0o6755))
		must(os.WriteFile(filepath.Join(src, "a", "owned"), []byte("o"), 0o640))
		must(os.Lchown(filepath.Join(src, "a", "owned"), 4321, 8765))
	}
	return src
}

func archive(t testing.TB, src string) (*pxar.Accessor, []byte, []byte) {
	t.Helper()
	var meta, payload bytes.Buffer
	if _, err := walk.Walk(context.Background(), src, &meta, &payload, walk.Options{}); err != nil {
		t.Fatal(err)
	}
	acc, err := pxar.NewAccessor(context.Background(), bytes.NewReader(meta.Bytes()), int64(meta.Len()),
		bytes.NewReader(payload.Bytes()), int64(payload.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return acc, meta.Bytes(), payload.Bytes()
}

// describe lists a tree entry by entry: type, mode, owner, size, mtime,
// content hash, link target, xattrs and which entries share an inode.
func describe(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	inodes := map[uint64]string{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		var st unix.Stat_t
		unix.Lstat(p, &st)
		line := fmt.Sprintf("%q mode=%o uid=%d gid=%d mtime=%d.%09d", rel, st.Mode, st.Uid, st.Gid, st.Mtim.Sec, st.Mtim.Nsec)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" size=%d", len(b))
			if st.Nlink > 1 {
				if first, ok := inodes[st.Ino]; ok {
					line += " hardlink-of=" + first
				} else {
					inodes[st.Ino] = rel
				}
			}
			line += fmt.Sprintf(" content=%x", sha(b))
		case unix.S_IFLNK:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case unix.S_IFCHR, unix.S_IFBLK:
			line += fmt.Sprintf(" rdev=%d", st.Rdev)
		}
		buf := make([]byte, 256)
		if n, err := unix.Lgetxattr(p, "user.cairn", buf); err == nil {
			line += " xattr=" + string(buf[:n])
		}
		out = append(out, line)
		return nil
	})
	sort.Strings(out)
	return out
}

func TestTreeRestore(t *testing.T) {
	src := makeTree(t)
	acc, _, _ := archive(t, src)
	want := describe(t, src)
	for _, threads := range []int{1, 8} {
		dst := filepath.Join(t.TempDir(), "dst")
		stats := new(Stats)
		rep, err := Tree(context.Background(), acc, acc.Root(), "", dst, TreeOptions{Threads: threads, Stats: stats})
		if err != nil {
			t.Fatalf("threads %d: %v %+v", threads, err, rep.Failed)
		}
		if stats.Files.Load() != rep.Files-1 { // the progress counts regular files, not the hard link
			t.Errorf("threads %d: %d files counted, %d restored with a hard link", threads, stats.Files.Load(), rep.Files)
		}
		got := describe(t, dst)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("threads %d: restored tree differs\n got:\n%s\nwant:\n%s", threads, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		var st unix.Stat_t
		unix.Stat(filepath.Join(dst, "a", "sparse"), &st)
		if st.Blocks*512 >= 8<<20 {
			t.Fatalf("sparse file takes %d bytes", st.Blocks*512)
		}
	}
	// an existing, non-empty target is refused without Overwrite
	dst := filepath.Join(t.TempDir(), "dst")
	os.MkdirAll(dst, 0o755)
	os.WriteFile(filepath.Join(dst, "x"), nil, 0o644)
	if _, err := Tree(context.Background(), acc, acc.Root(), "", dst, TreeOptions{}); err == nil || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("non-empty target: %v", err)
	}
	if _, err := Tree(context.Background(), acc, acc.Root(), "", dst, TreeOptions{Overwrite: true}); err != nil {
		t.Fatalf("overwrite: %v", err)
	}
}

func TestTreeRestoreSubpath(t *testing.T) {
	src := makeTree(t)
	acc, _, _ := archive(t, src)
	e, err := acc.LookupPath(context.Background(), "a/b c")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "sub")
	if _, err := Tree(context.Background(), acc, e, "a/b c", dst, TreeOptions{}); err != nil {
		t.Fatal(err)
	}
	// the hard link's target is outside the subtree: a copy is restored
	got, err := os.ReadFile(filepath.Join(dst, "d", "hard"))
	want, _ := os.ReadFile(filepath.Join(src, "a", "data.bin"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("hard link copy: %v", err)
	}
	if target, _ := os.Readlink(filepath.Join(dst, "link")); target != "../a/data.bin" {
		t.Fatalf("symlink %q", target)
	}
}

// TestTreeRestoreCorrupt: a payload that cannot be read fails only the
// files it holds; the rest is restored and the failures are named.
func TestTreeRestoreCorrupt(t *testing.T) {
	src := makeTree(t)
	_, meta, payload := archive(t, src)
	// a range of the payload fails to read, as a corrupt chunk does
	bad := &faultyReader{r: bytes.NewReader(payload), from: int64(len(payload)) / 2, to: int64(len(payload))/2 + 4096}
	acc, err := pxar.NewAccessor(context.Background(), bytes.NewReader(meta), int64(len(meta)), bad, int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	rep, err := Tree(context.Background(), acc, acc.Root(), "", dst, TreeOptions{Threads: 2})
	if !errors.Is(err, ErrPartial) || len(rep.Failed) == 0 {
		t.Fatalf("want a partial restore, got %v %+v", err, rep)
	}
	for _, f := range rep.Failed {
		if !strings.HasPrefix(f.Path, dst) || f.Err == "" {
			t.Fatalf("failure without a path: %+v", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "a", "b c", "empty")); err != nil {
		t.Fatalf("the rest was not restored: %v", err)
	}
}

func sha(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:8]
}

// faultyReader fails reads that touch [from, to).
type faultyReader struct {
	r        *bytes.Reader
	from, to int64
}

var errFault = errors.New("chunk 00ff: corrupt")

func (f *faultyReader) ReadAt(p []byte, off int64) (int, error) {
	if off < f.to && off+int64(len(p)) > f.from {
		return 0, errFault
	}
	return f.r.ReadAt(p, off)
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	names, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(names)
}

// A restore cancelled midway stops with the context's error and leaves
// no file open, whatever was queued for the workers at that moment.
func TestTreeRestoreCancel(t *testing.T) {
	src := t.TempDir()
	for i := range 400 {
		dir := filepath.Join(src, fmt.Sprintf("d%02d", i%20))
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), randBytes(3000+i, uint64(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	acc, _, _ := archive(t, src)
	before := openFDs(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := new(Stats)
	go func() {
		for st.Bytes.Load() == 0 && ctx.Err() == nil {
			runtime.Gosched()
		}
		cancel()
	}()
	_, err := Tree(ctx, acc, acc.Root(), "", filepath.Join(t.TempDir(), "dst"), TreeOptions{Threads: 2, Stats: st})
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled restore: %v", err)
	}
	cancel()
	if after := openFDs(t); after > before {
		t.Fatalf("%d descriptors open after the restore, %d before", after, before)
	}
}

// TestTreeRestoreOldKernel restores as on a kernel without openat2,
// fchmodat2 and setxattrat (their fallbacks: openat with O_NOFOLLOW and
// the /proc/self/fd forms): the same tree comes out.
func TestTreeRestoreOldKernel(t *testing.T) {
	flags := []*atomic.Int32{&haveOpenat2, &haveFchmodat2, &haveSetxattrat}
	for _, f := range flags {
		f.Store(2)
	}
	defer func() {
		for _, f := range flags {
			f.Store(0)
		}
	}()
	src := makeTree(t)
	acc, _, _ := archive(t, src)
	dst := filepath.Join(t.TempDir(), "dst")
	if rep, err := Tree(context.Background(), acc, acc.Root(), "", dst, TreeOptions{Threads: 2}); err != nil {
		t.Fatalf("%v %+v", err, rep.Failed)
	}
	if got, want := describe(t, dst), describe(t, src); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("restored tree differs\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
