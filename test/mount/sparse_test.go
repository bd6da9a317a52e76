package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestMountSparseCopy: an image backed up with `cairn backup` and copied
// out of `cairn mount` by cp --sparse=auto is as sparse as the file
// `cairn restore` writes (st_blocks), with the same bytes; the mount
// answers SEEK_DATA and SEEK_HOLE as the restored file does, at every
// chunk boundary and inside chunks; tar -S archives the data only;
// rsync -S and qemu-img convert copy it sparse too.
func TestMountSparseCopy(t *testing.T) {
	st := e2e.SharedStore(t)
	const cs, n, tail = 256 << 10, 16, 4321
	data := map[int]bool{3: true, 4: true, 9: true, 10: true} // holes at the start, middle and end of the chunks
	dir := e2e.TmpfsDir(t, "cairn-sparse-")
	src := filepath.Join(dir, "disk.raw")
	img := make([]byte, n*cs+tail)
	for i := range n {
		if data[i] {
			copy(img[i*cs:], e2e.RandBytes(cs, uint64(100+i)))
		}
	}
	copy(img[n*cs:], e2e.RandBytes(tail, 99)) // a data tail
	if err := os.WriteFile(src, img, 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2e.MustCairn(t, "--store", st, "backup", "--type", "vm", "--id", "sparse", "--chunk-size", "256K", "--json", "disk.img:"+src)
	var sum struct{ Snapshot string }
	if err := json.Unmarshal([]byte(r.Stdout), &sum); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(dir, "restored")
	e2e.MustCairn(t, "--store", st, "restore", sum.Snapshot, "disk.img", restored)
	mnt := e2e.MountStore(t, st)
	p := filepath.Join(mnt, sum.Snapshot, "disk.img")

	dataBytes := int64(len(data)*cs + tail)
	if got, want := stBlocks(t, p), (dataBytes+511)/512; got != want {
		t.Errorf("st_blocks through the mount %d, want %d", got, want)
	}
	var offs []int64
	for at := int64(0); at <= int64(len(img)); at += cs {
		offs = append(offs, at-1, at, at+1, at+cs/3)
	}
	offs = append(offs, int64(len(img))-1, int64(len(img)), int64(len(img))+1)
	if got, want := lseeks(t, p, offs), lseeks(t, restored, offs); got != want {
		t.Errorf("lseek through the mount:\n%s\nof the restored file:\n%s", got, want)
	}
	cp := filepath.Join(dir, "cp")
	if out, err := exec.Command("cp", "--sparse=auto", p, cp).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	if got, err := os.ReadFile(cp); err != nil || !bytes.Equal(got, img) {
		t.Fatalf("cp's copy differs (%v)", err)
	}
	if got, want := stBlocks(t, cp), stBlocks(t, restored); got != want {
		t.Errorf("cp's copy has %d blocks, the restored file %d", got, want)
	}
	// rsync -S and qemu-img convert (.ci/run installs both)
	for tool, args := range map[string][]string{
		"rsync":    {"-S", p, filepath.Join(dir, "rsync")},
		"qemu-img": {"convert", "-f", "raw", "-O", "raw", p, filepath.Join(dir, "qemu-img")},
	} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Logf("%s not installed: not checked", tool)
			continue
		}
		if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", tool, err, out)
		}
		to := args[len(args)-1]
		got, err := os.ReadFile(to)
		slack := int64(0)
		if tool == "qemu-img" && len(got) == (len(img)+511)/512*512 {
			// A raw image of whole sectors, whose first 4 KiB qemu
			// allocates (to probe the alignment).
			if bytes.Count(got[len(img):], []byte{0}) == len(got)-len(img) {
				got = got[:len(img)]
			}
			slack = 8
		}
		if err != nil || !bytes.Equal(got, img) {
			t.Fatalf("%s's copy differs (%v)", tool, err)
		}
		if got, want := stBlocks(t, to), stBlocks(t, restored); got < want || got > want+slack {
			t.Errorf("%s's copy has %d blocks, the restored file %d", tool, got, want)
		}
	}
	tarball := filepath.Join(dir, "disk.tar")
	if out, err := exec.Command("tar", "-S", "-cf", tarball, "-C", filepath.Dir(p), "disk.img").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	if fi, err := os.Stat(tarball); err != nil || fi.Size() > dataBytes+32<<10 {
		t.Errorf("tar -S of %d bytes of data: %v bytes (%v)", dataBytes, fi.Size(), err)
	}
}

func stBlocks(t *testing.T, path string) int64 {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks
}

// lseeks is SEEK_DATA and SEEK_HOLE of path at each of offs.
func lseeks(t *testing.T, path string, offs []int64) string {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var b bytes.Buffer
	for _, off := range offs {
		if off < 0 {
			continue
		}
		d, derr := unix.Seek(int(fh.Fd()), off, unix.SEEK_DATA)
		h, herr := unix.Seek(int(fh.Fd()), off, unix.SEEK_HOLE)
		fmt.Fprintf(&b, "%d: data %d %v, hole %d %v\n", off, d, derr, h, herr)
	}
	return b.String()
}
