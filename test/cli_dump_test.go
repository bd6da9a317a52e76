package test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

const dumpACLUndef = 0xffffffff

// setupOK fails the test on an error of its setup.
func setupOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// dumpSource builds a tree with every kind of entry and metadata a tar
// stream carries: owners, set-id and sticky modes, nanosecond mtimes,
// symlinks (relative and absolute), hard links (within a directory and
// across), a device, a FIFO, a socket, xattrs, file capabilities, access
// and default ACLs, and names with control characters.
func dumpSource(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	e2e.WriteTree(t, src, map[string]string{"a.txt": "ay\n", "big.bin": string(e2e.RandBytes(1<<20+777, 41)),
		"d/f": "shared\n", "d/x/keep": "k", "empty": "", "ctl\x01name": "c", "new\nline": "n", "suid": "#!/bin/sh\n"})
	p := func(name string) string { return filepath.Join(src, name) }
	setupOK(t, os.Link(p("a.txt"), p("d/hl")))     // target outside a dump of d/
	setupOK(t, os.Link(p("d/f"), p("d/x/g")))      // target inside it
	setupOK(t, os.Symlink("../a.txt", p("d/rel"))) // relative
	setupOK(t, os.Symlink("/etc/passwd", p("abs")))
	setupOK(t, os.Mkdir(p("sticky"), 0o755))
	setupOK(t, unix.Mkfifo(p("fifo"), 0o640))
	setupOK(t, unix.Mknod(p("null"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))))
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	setupOK(t, err)
	setupOK(t, unix.Bind(fd, &unix.SockaddrUnix{Name: p("sock")}))
	unix.Close(fd)
	setupOK(t, os.Lchown(p("d/f"), 1234, 5678))
	setupOK(t, os.Lchown(p("abs"), 4321, 8765))
	setupOK(t, os.Chown(p("suid"), 1000, 1000))
	setupOK(t, os.Chmod(p("suid"), 0o4755))
	setupOK(t, os.Chmod(p("sticky"), 0o1777))
	setupOK(t, unix.Setxattr(p("a.txt"), "user.note", []byte("hello\x00world"), 0))
	setupOK(t, unix.Setxattr(p("d"), "trusted.t", []byte("dir xattr"), 0))
	// cap_net_bind_service, effective (VFS_CAP_REVISION_2)
	caps := []byte{1, 0, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	setupOK(t, unix.Setxattr(p("suid"), "security.capability", caps, 0))
	setupOK(t, unix.Setxattr(p("d/f"), "system.posix_acl_access", storetest.ACLXattr([3]uint32{1, 6, dumpACLUndef},
		[3]uint32{2, 4, 1234}, [3]uint32{4, 4, dumpACLUndef}, [3]uint32{8, 6, 5678}, [3]uint32{0x10, 6, dumpACLUndef},
		[3]uint32{0x20, 4, dumpACLUndef}), 0))
	setupOK(t, unix.Setxattr(p("d"), "system.posix_acl_default", storetest.ACLXattr([3]uint32{1, 7, dumpACLUndef},
		[3]uint32{2, 5, 1234}, [3]uint32{4, 5, dumpACLUndef}, [3]uint32{0x10, 7, dumpACLUndef}, [3]uint32{0x20, 0, dumpACLUndef}), 0))
	// Times last, directories after their entries.
	var paths []string
	setupOK(t, filepath.WalkDir(src, func(path string, _ fs.DirEntry, err error) error {
		paths = append(paths, path)
		return err
	}))
	for i, path := range slices.Backward(paths) {
		ts := unix.NsecToTimespec(time.Date(2021, 3, 4, 5, 6, 7, 123456789+i, time.UTC).UnixNano())
		setupOK(t, unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW))
	}
	return src
}

// dumpFileState is what the comparison checks of one path.
type dumpFileState struct {
	mode       uint32
	uid, gid   uint32
	size       int64
	rdev       uint64
	mtime      unix.Timespec
	target     string
	content    []byte
	xattrs     map[string]string
	ino, nlink uint64
}

func dumpLstate(t *testing.T, path string) dumpFileState {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	s := dumpFileState{mode: st.Mode, uid: st.Uid, gid: st.Gid, rdev: st.Rdev, mtime: st.Mtim, ino: st.Ino, nlink: uint64(st.Nlink),
		xattrs: map[string]string{}}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		s.size = st.Size
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s.content = b
	case unix.S_IFLNK:
		s.target, _ = os.Readlink(path)
	}
	buf := make([]byte, 64<<10)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		t.Fatalf("listxattr %s: %v", path, err)
	}
	for name := range strings.SplitSeq(string(buf[:n]), "\x00") {
		if name == "" {
			continue
		}
		v := make([]byte, 64<<10)
		m, err := unix.Lgetxattr(path, name, v)
		if err != nil {
			t.Fatalf("getxattr %s %s: %v", path, name, err)
		}
		s.xattrs[name] = fmt.Sprintf("%q", v[:m]) // readable in messages
	}
	return s
}

// compareDumpTree holds got (an extracted dump) to want (the source):
// the same paths (sockets left out), and for each its type, mode,
// owner, mtime to the nanosecond, size, content, symlink target, device
// number and every xattr (ACLs and capabilities included); paths
// hard-linked together in want are hard-linked together in got.
func compareDumpTree(t *testing.T, want, got string, copies map[string]bool) {
	t.Helper()
	inodes := map[uint64]uint64{} // want's inode -> got's
	seen := map[string]bool{}
	err := filepath.WalkDir(want, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(want, path)
		if d.Type()&fs.ModeSocket != 0 {
			if _, err := os.Lstat(filepath.Join(got, rel)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("socket %q in the extracted tree: %v", rel, err)
			}
			return nil
		}
		seen[rel] = true
		w, g := dumpLstate(t, path), dumpLstate(t, filepath.Join(got, rel))
		wi, gi := w.ino, g.ino
		w.ino, g.ino, w.nlink, g.nlink = 0, 0, 0, 0
		if w.mode&unix.S_IFMT == unix.S_IFLNK {
			w.mtime, g.mtime = unix.Timespec{}, unix.Timespec{} // not every tar sets them
		}
		if !sameDumpState(w, g) {
			t.Errorf("%q:\n got  %+v\n want %+v", rel, g, w)
		}
		if w.mode&unix.S_IFMT == unix.S_IFREG && !copies[rel] {
			if prev, ok := inodes[wi]; ok && prev != gi {
				t.Errorf("%q: not hard-linked as in the source", rel)
			}
			inodes[wi] = gi
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(got, func(path string, _ fs.DirEntry, err error) error {
		if rel, _ := filepath.Rel(got, path); err == nil && !seen[rel] {
			t.Errorf("extra path %q in the extracted tree", rel)
		}
		return err
	})
}

func sameDumpState(a, b dumpFileState) bool {
	return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b)
}

// dumpToTar runs cairn args with its stdout piped into GNU tar extracting
// into dir, as `cairn dump … | tar -x …` does; it returns cairn's result.
func dumpToTar(t *testing.T, dir string, args ...string) e2e.Result {
	t.Helper()
	dump := exec.Command(e2e.Binary(), args...)
	var errb bytes.Buffer
	dump.Stderr = &errb
	x := exec.Command("tar", "-x", "--xattrs", "--xattrs-include=*", "--acls", "-p", "-C", dir)
	pipe, err := dump.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	x.Stdin = pipe
	var xerr bytes.Buffer
	x.Stderr = &xerr
	if err := dump.Start(); err != nil {
		t.Fatal(err)
	}
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	derr := dump.Wait()
	if err := x.Wait(); err != nil && derr == nil {
		t.Fatalf("tar -x: %v: %s", err, xerr.String())
	}
	r := e2e.Result{Stderr: errb.String()}
	if ee, ok := derr.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	}
	return r
}

// TestCLIDumpTar: `cairn dump … | tar -x --xattrs --acls -p` recreates
// the backed-up tree byte for byte and metadata for metadata; a dump of
// a subdirectory makes hard links to files inside it and copies of files
// outside; `cat --tar` writes the same stream; sockets are skipped with a
// warning; a terminal is refused.
func TestCLIDumpTar(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: owners, devices, trusted xattrs")
	}
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("needs GNU tar")
	}
	t.Parallel()
	st := e2e.SharedStore(t)
	src := dumpSource(t)
	snap := e2e.ParsePxarSummary(t, e2e.MustCairn(t, "--store", st, "backup", "--id", "cli-dump", "--json", "root.pxar:"+src).Stdout).Snapshot

	out := t.TempDir()
	r := dumpToTar(t, out, "--store", st, "dump", snap, "root.pxar")
	if r.Code != 0 || !strings.Contains(r.Stderr, "sock: socket skipped") {
		t.Fatalf("dump: exit %d, stderr %q", r.Code, r.Stderr)
	}
	compareDumpTree(t, src, out, nil)

	sub := t.TempDir()
	if r := dumpToTar(t, sub, "--store", st, "dump", snap, "root.pxar", "d"); r.Code != 0 {
		t.Fatalf("dump d: exit %d: %s", r.Code, r.Stderr)
	}
	compareDumpTree(t, filepath.Join(src, "d"), sub, map[string]bool{"hl": true})
	if a, b := dumpLstate(t, filepath.Join(sub, "f")), dumpLstate(t, filepath.Join(sub, "x/g")); a.ino != b.ino {
		t.Error("d/x/g is not a hard link to d/f in the dump of d")
	}

	// The stream itself: relative names, PAX records, cat --tar the same.
	dump := e2e.MustCairn(t, "--store", st, "dump", snap, "root.pxar", "d")
	if cat := e2e.MustCairn(t, "--store", st, "cat", "--tar", snap, "root.pxar", "d"); cat.Stdout != dump.Stdout {
		t.Error("cat --tar differs from dump")
	}
	names := map[string]*tar.Header{}
	tr := tar.NewReader(strings.NewReader(dump.Stdout))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[h.Name] = h
	}
	if h := names["./"]; h == nil || !strings.Contains(h.PAXRecords["SCHILY.acl.default"], "user:1234:r-x") {
		t.Errorf("./ header %+v", h)
	}
	if h := names["f"]; h == nil || h.PAXRecords["SCHILY.acl.access"] != "user::rw-,user:1234:r--,group::r--,group:5678:rw-,mask::rw-,other::r--" {
		t.Errorf("f header %+v", h)
	}
	if h := names["x/g"]; h == nil || h.Typeflag != tar.TypeLink || h.Linkname != "f" {
		t.Errorf("x/g header %+v", h)
	}

	pty := dumpPTY(t)
	cmd := exec.Command(e2e.Binary(), "--store", st, "dump", snap, "root.pxar")
	cmd.Stdout = pty
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(errb.String(), "terminal") {
		t.Errorf("dump to a terminal: %v, %q", err, errb.String())
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dump", snap, "root.pxar", "nothere"}, 1, "nothere"},
		{[]string{"dump", snap, "root.pxar", "../etc"}, 1, "invalid file name"},
		{[]string{"dump", snap, "nope.pxar"}, 1, "nope.pxar"},
		{[]string{"dump", "--ns", "other", snap, "root.pxar"}, 1, "other"},
		{[]string{"dump", "--cache-size", "lots", snap, "root.pxar"}, 2, "--cache-size"},
	} {
		r := e2e.Cairn(t, nil, append([]string{"--store", st}, c.args...)...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "panic") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, r.Code, r.Stderr, c.code, c.want)
		}
	}
}

// dumpPTY opens a pseudo-terminal and returns its terminal side.
func dumpPTY(t *testing.T) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
