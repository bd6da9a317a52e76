package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestPxarBackupLsCat backs up an image and a directory tree into one
// snapshot, then lists and reads the tree back without a mount.
func TestPxarBackupLsCat(t *testing.T) {
	st := e2e.SharedStore(t)
	img, imgData := e2e.SparseImage(t, 1<<20, 7)
	src := t.TempDir()
	big := string(e2e.RandBytes(3<<20, 8))
	e2e.WriteTree(t, src, map[string]string{"b.txt": "bee\n", "a.txt": "ay\n", "dir/big.bin": big, "dir/empty": "",
		"odd\nname": "o", "excluded.o": "x", "dir/.pxarexclude": "cache/\n", "dir/cache/c": "x"})
	if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(src, "a.txt"), filepath.Join(src, "dir", "hard")); err != nil {
		t.Fatal(err)
	}
	r := e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", "pxar-ls", "--json", "--exclude", "*.o",
		"disk.img:"+img, "root.pxar:"+src)
	sum := e2e.ParsePxarSummary(t, r.Stdout)
	fa := sum.FileArchives[0]
	if fa.Archive != "root.pxar" || fa.Mode != "data" || fa.Files != 6 || fa.Dirs != 2 || fa.Symlinks != 1 ||
		fa.Hardlinks != 1 || fa.Excluded != 2 || sum.Errors != 0 {
		t.Fatalf("summary %+v", sum)
	}
	ls := e2e.MustCairn(t, "--store", st, "ls", sum.Snapshot, "root.pxar")
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(ls.Stdout), "\n") {
		f := strings.Fields(line)
		names = append(names, strings.Join(f[6:], " "))
	}
	want := []string{"a.txt", "b.txt", "dir", "link -> a.txt", `"odd\nname"`}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Fatalf("ls:\n%s\nnames %q, want %q", ls.Stdout, names, want)
	}
	if !strings.HasPrefix(ls.Stdout, "-rw-r--r--") || !strings.Contains(ls.Stdout, "\ndrwx") {
		t.Errorf("ls modes:\n%s", ls.Stdout)
	}
	sub := e2e.MustCairn(t, "--store", st, "ls", sum.Snapshot, "root.pxar", "dir")
	if !strings.Contains(sub.Stdout, " 3145728 ") || strings.Contains(sub.Stdout, "cache") {
		t.Errorf("ls dir:\n%s", sub.Stdout)
	}
	for path, want := range map[string]string{"dir/big.bin": big, "b.txt": "bee\n", "dir/hard": "ay\n", "dir/empty": ""} {
		if got := e2e.MustCairn(t, "--store", st, "cat", sum.Snapshot, "root.pxar", path).Stdout; got != want {
			t.Errorf("cat %s: %d bytes, want %d", path, len(got), len(want))
		}
	}
	if got := e2e.MustCairn(t, "--store", st, "cat", sum.Snapshot, "disk.img").Stdout; !bytes.Equal([]byte(got), imgData) {
		t.Error("cat disk.img differs")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cat", sum.Snapshot, "root.pxar", "dir"}, "not a regular file"},
		{[]string{"cat", sum.Snapshot, "root.pxar", "nothere"}, "root.pxar: nothere"},
		{[]string{"cat", sum.Snapshot, "root.pxar"}, "name a path"},
		{[]string{"ls", sum.Snapshot, "root.pxar", "../etc"}, "invalid file name"},
		{[]string{"ls", sum.Snapshot, "disk.img"}, "not a file (pxar) archive"},
		{[]string{"backup", "--id", "pxar-bad", "root.pxar:" + filepath.Join(src, "b.txt")}, "not a directory"},
		{[]string{"backup", "--id", "pxar-bad", "root.pxar:/nonexistent/dir"}, "/nonexistent/dir"},
		{[]string{"backup", "--id", "pxar-bad", "--change-detection-mode", "fast", "root.pxar:" + src}, "change detection mode"},
	} {
		r := e2e.Cairn(t, nil, append([]string{"--store", st}, c.args...)...)
		if r.Code == 0 || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "panic") {
			t.Errorf("%v: exit %d, stderr %q, want it to mention %q", c.args, r.Code, r.Stderr, c.want)
		}
	}
}

// TestPxarIncremental: the second backup reads only the changed file and
// references the others; data mode reads them all.
func TestPxarIncremental(t *testing.T) {
	st := e2e.SharedStore(t)
	src := t.TempDir()
	files := map[string]string{}
	for i := range 20 {
		files[filepath.Join("d", string(rune('a'+i)))] = string(e2e.RandBytes(300<<10, uint64(i)))
	}
	e2e.WriteTree(t, src, files)
	// Files changed within 2 s before a backup are read again by the
	// next one (their ctime could still move unseen).
	time.Sleep(2100 * time.Millisecond)
	backup := func(extra ...string) e2e.PxarSummary {
		// Small chunks: each file starts a chunk, so reusing the others'
		// chunks leaves no padding.
		args := append([]string{"--store", st, "backup", "--type", "host", "--id", "pxar-inc", "--json", "--chunk-size", "64K"}, extra...)
		s := e2e.ParsePxarSummary(t, e2e.MustCairn(t, append(args, "root.pxar:"+src)...).Stdout)
		time.Sleep(1100 * time.Millisecond) // next snapshot second
		return s
	}
	first := backup()
	if fa := first.FileArchives[0]; fa.Mode != "data" || fa.ReadFiles != 20 {
		t.Fatalf("first backup %+v", fa)
	}
	changed := string(e2e.RandBytes(300<<10, 99))
	if err := os.WriteFile(filepath.Join(src, "d", "c"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	second := backup()
	if fa := second.FileArchives[0]; fa.Mode != "metadata" || fa.ReadFiles != 1 || fa.ReusedFiles != 19 {
		t.Fatalf("second backup %+v", fa)
	}
	for name, want := range map[string]string{"d/c": changed, "d/a": files["d/a"], "d/t": files["d/t"]} {
		if got := e2e.MustCairn(t, "--store", st, "cat", second.Snapshot, "root.pxar", name).Stdout; got != want {
			t.Errorf("cat %s: content differs", name)
		}
	}
	third := backup("--change-detection-mode", "data")
	if fa := third.FileArchives[0]; fa.Mode != "data" || fa.ReadFiles != 20 || fa.ReusedFiles != 0 {
		t.Fatalf("data-mode backup %+v", fa)
	}
	legacy := backup("--change-detection-mode", "legacy")
	if fa := legacy.FileArchives[0]; fa.Mode != "legacy" || fa.ReadFiles != 20 {
		t.Fatalf("legacy backup %+v", fa)
	}
	if got := e2e.MustCairn(t, "--store", st, "cat", legacy.Snapshot, "root.pxar", "d/c").Stdout; got != changed {
		t.Error("cat from the single-stream archive differs")
	}
}

// TestPxarUnreadable runs the backup without root's permission override:
// unreadable entries are reported with their path, the snapshot is kept
// and the exit code is 3.
func TestPxarUnreadable(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and setpriv to drop CAP_DAC_OVERRIDE")
	}
	st := e2e.SharedStore(t)
	src := t.TempDir()
	e2e.WriteTree(t, src, map[string]string{"ok": "fine", "secret": "s", "closed/x": "x"})
	for _, p := range []string{"secret", "closed"} {
		if err := os.Chmod(filepath.Join(src, p), 0); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(setpriv, "--bounding-set=-dac_override,-dac_read_search", "--", e2e.Binary(),
		"--store", st, "backup", "--type", "host", "--id", "pxar-unreadable", "--json", "root.pxar:"+src)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Fatalf("exit %v, stderr %s", err, errb.String())
	}
	sum := e2e.ParsePxarSummary(t, out.String())
	for _, p := range []string{"secret", "closed"} {
		if !strings.Contains(errb.String(), filepath.Join(src, p)+": permission denied") {
			t.Errorf("stderr does not report %s: %s", p, errb.String())
		}
	}
	if sum.Errors != 2 || sum.FileArchives[0].Files != 1 {
		t.Fatalf("summary %+v", sum)
	}
	if got := e2e.MustCairn(t, "--store", st, "cat", sum.Snapshot, "root.pxar", "ok").Stdout; got != "fine" {
		t.Errorf("cat ok: %q", got)
	}
}
