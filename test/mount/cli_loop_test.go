package test

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// needLoop skips without loop devices or the tools of the loop recipe,
// unless CAIRN_TEST_REQUIRE_FUSE=1 (CI), where that is a failure.
func needLoop(t *testing.T) {
	t.Helper()
	var missing []string
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		missing = append(missing, "/dev/loop-control (loop devices)")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	if os.Getenv("CAIRN_TEST_REQUIRE_FUSE") == "1" {
		t.Fatalf("missing %s and CAIRN_TEST_REQUIRE_FUSE=1 (install e2fsprogs and mount; modprobe loop)", strings.Join(missing, ", "))
	}
	t.Skipf("missing %s; set CAIRN_TEST_REQUIRE_FUSE=1 to make this a failure", strings.Join(missing, ", "))
}

// partitionedImage writes a disk image with an MBR partition table whose
// one Linux partition (from 1 MiB, partSize bytes) holds an ext4 file
// system made from src, as a VM's disk would be.
func partitionedImage(t *testing.T, src string, partSize int64) string {
	t.Helper()
	const start = 1 << 20
	img := filepath.Join(t.TempDir(), "disk.raw")
	mbr := make([]byte, 512)
	e := mbr[446:462]
	e[4] = 0x83 // Linux
	binary.LittleEndian.PutUint32(e[8:], start/512)
	binary.LittleEndian.PutUint32(e[12:], uint32(partSize/512))
	mbr[510], mbr[511] = 0x55, 0xaa
	if err := os.WriteFile(img, mbr, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, start+partSize); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-E", "offset="+strconv.Itoa(start), "-d", src, img, strconv.FormatInt(partSize>>10, 10)+"k").CombinedOutput()
	if err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	return img
}

// runTool runs a command and returns its trimmed output, failing the test
// when it fails.
func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestCLIMountLoopImage is the README's recipe for browsing a file system
// inside a backed-up disk image: the image in the mount is attached
// read-only to a loop device and its partition mounted read-only, either
// through the partition's own device (losetup -P, or partx -a where no
// udev makes the nodes) or through a loop device limited to the
// partition (losetup -o --sizelimit).
func TestCLIMountLoopImage(t *testing.T) {
	e2e.NeedFUSE(t)
	needLoop(t)
	st := e2e.SharedStore(t)
	src := filepath.Join(t.TempDir(), "src")
	files := map[string]string{"etc/hostname": "vm100\n", "home/u/notes.txt": strings.Repeat("notes ", 3000), "data/random.bin": string(e2e.RandBytes(200<<10, 9))}
	e2e.WriteTree(t, src, files)
	const partSize = 8 << 20
	img := partitionedImage(t, src, partSize)
	e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", "cli-loop", "--no-sync", "disk.img:"+img)
	mnt := e2e.MountStore(t, st)
	disk := filepath.Join(mnt, "host", "cli-loop", "latest", "disk.img")

	attach := map[string]func(t *testing.T) string{
		"partscan": func(t *testing.T) string {
			dev := runTool(t, "losetup", "-r", "-P", "-f", "--show", disk)
			t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
			if _, err := os.Stat(dev + "p1"); err != nil {
				// no udev here: the table was read, the node not made
				t.Logf("%sp1 missing after losetup -P (%v): adding it with partx -a", dev, err)
				runTool(t, "partx", "-a", dev)
			}
			return dev + "p1"
		},
		"offset": func(t *testing.T) string {
			dev := runTool(t, "losetup", "-r", "-o", strconv.Itoa(1<<20), "--sizelimit", strconv.Itoa(partSize), "-f", "--show", disk)
			t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
			return dev
		},
	}
	for _, how := range []string{"partscan", "offset"} {
		t.Run(how, func(t *testing.T) {
			dev := attach[how](t)
			dir := t.TempDir()
			runTool(t, "mount", "-o", "ro", dev, dir)
			t.Cleanup(func() { exec.Command("umount", dir).Run() })
			for name, want := range files {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != want {
					t.Errorf("%s in the image's file system: %d bytes, %v; want %d bytes", name, len(got), err, len(want))
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
				t.Errorf("writing into the read-only file system: %v, want EROFS", err)
			}
		})
	}
}
