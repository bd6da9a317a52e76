package test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// backupRandomImage backs up size random bytes (its own chunks) as
// disk.img in group id and returns the snapshot, the image and the path
// of its second chunk file.
func backupRandomImage(t *testing.T, st, id string, size int, seed uint64) (string, []byte, string) {
	t.Helper()
	img := e2e.RandBytes(size, seed)
	src := filepath.Join(t.TempDir(), "disk.raw")
	if err := os.WriteFile(src, img, 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2e.MustCairn(t, "--store", st, "backup", "--type", "vm", "--id", id, "--chunk-size", "1M", "--json", "disk.img:"+src)
	var sum struct{ Snapshot string }
	json.Unmarshal([]byte(r.Stdout), &sum)
	fidx, err := os.ReadFile(filepath.Join(st, sum.Snapshot, "disk.img.fidx"))
	if err != nil {
		t.Fatal(err)
	}
	hexd := hexString(fidx[4096+32 : 4096+64])
	return sum.Snapshot, img, filepath.Join(st, ".chunks", hexd[:4], hexd)
}

// noTemps fails if dir holds anything but the names given.
func noTemps(t *testing.T, dir string, want ...string) {
	t.Helper()
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		found := false
		for _, w := range want {
			found = found || n.Name() == w
		}
		if !found {
			t.Fatalf("%s holds %s", dir, n.Name())
		}
	}
}

// TestRestoreIgnoreErrorsExit3: an image with a damaged chunk restores
// with --ignore-errors (zeros for the chunk, the range listed, the file
// in place) and exits 3, as the README says; without it the restore
// exits 1 and leaves no file under the target's name.
func TestRestoreIgnoreErrorsExit3(t *testing.T) {
	st := e2e.SharedStore(t)
	snap, img, chunkPath := backupRandomImage(t, st, "ignore-errors", 3<<20, 41)
	blob, err := os.ReadFile(chunkPath)
	if err != nil {
		t.Fatal(err)
	}
	orig := bytes.Clone(blob)
	blob[100] ^= 0x80
	os.WriteFile(chunkPath, blob, 0o644)
	defer os.WriteFile(chunkPath, orig, 0o644)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r := e2e.Cairn(t, nil, "--store", st, "restore", snap, "disk.img", out)
	if r.Code != 1 {
		t.Fatalf("damaged restore: exit %d, want 1\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Fatal("a failed restore left a file under the target's name")
	}
	noTemps(t, dir)
	r = e2e.Cairn(t, nil, "--store", st, "restore", "--ignore-errors", snap, "disk.img", out)
	if r.Code != 3 || !strings.Contains(r.Stdout, "damaged: offset 1048576") {
		t.Fatalf("--ignore-errors: exit %d, want 3\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil || len(got) != len(img) {
		t.Fatalf("restored %d bytes: %v", len(got), err)
	}
	want := bytes.Clone(img)
	clear(want[1<<20 : 2<<20])
	if !bytes.Equal(got, want) {
		t.Fatal("the restored image is not the image with the damaged chunk zeroed")
	}
	noTemps(t, dir, "out")
}

// TestRestoreImageFullDisk: an image restore onto a full file system (a
// small tmpfs, as root) fails naming the target, not /proc/self/fd, and
// leaves neither a partial file under the target's name nor its
// temporary file.
func TestRestoreImageFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	st := e2e.SharedStore(t)
	snap, _, _ := backupRandomImage(t, st, "full-disk", 3<<20, 42)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skip("cannot mount tmpfs:", err)
	}
	defer unix.Unmount(dir, 0)
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{{}, {"--overwrite"}} {
		if len(args) > 0 {
			os.WriteFile(out, []byte("the old image"), 0o644)
		}
		r := e2e.Cairn(t, nil, append(append([]string{"--store", st, "restore"}, args...), snap, "disk.img", out)...)
		if r.Code != 1 || !strings.Contains(r.Stderr, out) || strings.Contains(r.Stderr, "/proc/") ||
			!strings.Contains(r.Stderr, "no space left") {
			t.Fatalf("%v: exit %d, stderr %q", args, r.Code, r.Stderr)
		}
		if len(args) == 0 {
			if _, err := os.Lstat(out); err == nil {
				t.Fatal("a failed restore left a file under the target's name")
			}
			noTemps(t, dir)
		} else {
			if b, _ := os.ReadFile(out); string(b) != "the old image" {
				t.Fatalf("a failed --overwrite restore changed the old file: %q", b)
			}
			noTemps(t, dir, "out")
		}
	}
}

// TestRestoreImageOverSymlink: --overwrite of a target that is a
// symbolic link replaces the link and never writes through it.
func TestRestoreImageOverSymlink(t *testing.T) {
	st := e2e.SharedStore(t)
	snap, img, _ := backupRandomImage(t, st, "over-symlink", 1<<20+17, 43)
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("secret"), 0o600)
	out := filepath.Join(dir, "out")
	if err := os.Symlink(victim, out); err != nil {
		t.Fatal(err)
	}
	r := e2e.Cairn(t, nil, "--store", st, "restore", snap, "disk.img", out)
	if r.Code == 0 || !strings.Contains(r.Stderr, "--overwrite") {
		t.Fatalf("a symlink target without --overwrite: exit %d %q", r.Code, r.Stderr)
	}
	e2e.MustCairn(t, "--store", st, "restore", "--overwrite", snap, "disk.img", out)
	if b, _ := os.ReadFile(victim); string(b) != "secret" {
		t.Fatal("the restore wrote through the symlink")
	}
	var lst unix.Stat_t
	unix.Lstat(out, &lst)
	got, _ := os.ReadFile(out)
	if lst.Mode&unix.S_IFMT != unix.S_IFREG || !bytes.Equal(got, img) {
		t.Fatalf("target mode %o, %d bytes", lst.Mode, len(got))
	}
}
