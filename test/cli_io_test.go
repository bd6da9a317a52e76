package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// cairnIn runs the binary with stdin as its standard input (a pipe).
func cairnIn(t testing.TB, stdin []byte, args ...string) e2e.Result {
	t.Helper()
	if stdin == nil {
		stdin = []byte{} // an empty pipe, not the test's own stdin
	}
	return e2e.CairnStdin(t, nil, stdin, args...)
}

// backupSnapshot runs a backup with --json and returns its snapshot.
func backupSnapshot(t testing.TB, stdin []byte, args ...string) string {
	t.Helper()
	r := cairnIn(t, stdin, append(args, "--json")...)
	if r.Code != 0 {
		t.Fatalf("backup %v: exit %d: %s", args, r.Code, r.Stderr)
	}
	var sum struct{ Snapshot string }
	if err := json.Unmarshal([]byte(r.Stdout), &sum); err != nil || sum.Snapshot == "" {
		t.Fatalf("backup summary %q: %v", r.Stdout, err)
	}
	return sum.Snapshot
}

// TestCLIIORestoreFilters restores parts of a file archive with
// --include and --exclude: the patterns are backup's (anchored, anywhere,
// directory-only, "!"), paths are relative to the archive root also with
// --path, the directories on the way to included entries get their own
// metadata, an excluded directory goes with its subtree, and a hard link
// whose target is left out is restored as a copy. Bad patterns, and
// patterns for an image, are usage errors; --ns names the namespace.
func TestCLIIORestoreFilters(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	src := t.TempDir()
	e2e.Write(t, filepath.Join(src, "etc/ssh/sshd_config"), "port 22\n", 0o600)
	e2e.Write(t, filepath.Join(src, "etc/hosts"), "127.0.0.1 localhost\n", 0o644)
	e2e.Write(t, filepath.Join(src, "var/log/syslog.log"), "log\n", 0o640)
	e2e.Write(t, filepath.Join(src, "var/log/old/a.log"), "old\n", 0o640)
	e2e.Write(t, filepath.Join(src, "var/lib/db"), "db\n", 0o600)
	e2e.Write(t, filepath.Join(src, "home/u/.cache/big"), "cache\n", 0o644)
	e2e.Write(t, filepath.Join(src, "home/u/docs/r.txt"), "report\n", 0o644)
	e2e.Write(t, filepath.Join(src, "home/u/docs/keep.log"), "keep\n", 0o644)
	if err := os.Link(filepath.Join(src, "etc/hosts"), filepath.Join(src, "home/u/hosts")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "home/u"), 0o751); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(src, "var"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	snap := backupSnapshot(t, nil, "--store", st, "backup", "--ns", "io/filters", "--id", "filters", "root.pxar:"+src)
	rel := strings.TrimPrefix(snap, "ns/io/ns/filters/") // the reference inside --ns
	if rel == snap {
		t.Fatalf("snapshot %s is not in namespace io/filters", snap)
	}
	restore := func(args ...string) (string, e2e.Result) {
		out := filepath.Join(t.TempDir(), "out")
		all := append([]string{"--store", st, "restore", "--ns", "io/filters", rel, "root.pxar", out}, args...)
		return out, e2e.Cairn(t, nil, all...)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--include", "*.log", "--include", "/etc/ssh"},
			[]string{"etc/ssh/sshd_config", "home/u/docs/keep.log", "var/log/old/a.log", "var/log/syslog.log"}},
		{[]string{"--exclude", ".cache/", "--exclude", "/var", "--exclude", "/etc/hosts"},
			[]string{"etc/ssh/sshd_config", "home/u/docs/keep.log", "home/u/docs/r.txt", "home/u/hosts"}},
		{[]string{"--include", "/var/log", "--exclude", "old/"}, []string{"var/log/syslog.log"}},
		{[]string{"--exclude", "*.log", "--exclude", "!keep.log", "--exclude", "/etc", "--exclude", "/home/u/.cache"},
			[]string{"home/u/docs/keep.log", "home/u/docs/r.txt", "home/u/hosts", "var/lib/db"}},
		{[]string{"--include", "nothing-matches"}, nil},
	}
	for _, tc := range cases {
		out, r := restore(tc.args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, r.Code, r.Stderr)
		}
		if got := e2e.Files(t, out); !slices.Equal(got, tc.want) {
			t.Errorf("%v: restored %q, want %q", tc.args, got, tc.want)
		}
	}
	// the directories on the way to included entries have their metadata
	out, r := restore("--include", "docs/r.txt", "--include", "/var/lib/db")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if fi, err := os.Stat(filepath.Join(out, "home/u")); err != nil || fi.Mode().Perm() != 0o751 {
		t.Errorf("home/u: %v %v, want mode 751", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(out, "var")); err != nil || !fi.ModTime().Equal(mtime) {
		t.Errorf("var: %v %v, want mtime %s", fi, err, mtime)
	}
	if _, err := os.Stat(filepath.Join(out, "var/log")); err == nil {
		t.Error("var/log restored, though nothing in it was included")
	}
	// a hard link whose target is excluded is a copy with the content
	out, r = restore("--include", "/home/u/hosts")
	got, err := os.ReadFile(filepath.Join(out, "home/u/hosts"))
	if r.Code != 0 || err != nil || string(got) != "127.0.0.1 localhost\n" {
		t.Fatalf("hard link to an excluded file: exit %d %s, %q %v", r.Code, r.Stderr, got, err)
	}
	// --path: patterns stay relative to the archive root
	out = filepath.Join(t.TempDir(), "part")
	e2e.MustCairn(t, "--store", st, "restore", "--path", "var", "--exclude", "/var/log/old", "--json", snap, "root.pxar", out)
	if got := e2e.Files(t, out); !slices.Equal(got, []string{"lib/db", "log/syslog.log"}) {
		t.Errorf("--path var: restored %q", got)
	}
	// bad patterns and patterns for other archives are usage errors
	for _, args := range [][]string{{"--include", "["}, {"--exclude", "a\\"}, {"--exclude", ""}} {
		if _, r := restore(args...); r.Code != 2 || !strings.Contains(r.Stderr, "pattern") {
			t.Errorf("%v: exit %d, %q", args, r.Code, r.Stderr)
		}
	}
	img, _ := e2e.SparseImage(t, 64<<10, 3)
	isnap := backupSnapshot(t, nil, "--store", st, "backup", "--id", "filters-img", "disk.img:"+img)
	r = e2e.Cairn(t, nil, "--store", st, "restore", isnap, "disk.img", filepath.Join(t.TempDir(), "x"), "--exclude", "a")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--exclude") {
		t.Errorf("patterns for an image: exit %d, %q", r.Code, r.Stderr)
	}
	// --ns disagreeing with the reference's own namespace
	r = e2e.Cairn(t, nil, "--store", st, "restore", "--ns", "other", snap, "root.pxar", filepath.Join(t.TempDir(), "y"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "namespace") {
		t.Errorf("--ns other: exit %d, %q", r.Code, r.Stderr)
	}
}

// TestCLIIOStdinImage backs up an image from a pipe (NAME.img:-) beside a
// file, restores both and compares; an empty standard input is an error
// that keeps no snapshot, and two archives from standard input, or a tree
// from it, are usage errors.
func TestCLIIOStdinImage(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	data := append(e2e.RandBytes(700<<10, 71), make([]byte, 300<<10)...)
	data = append(data, e2e.RandBytes(12345, 72)...)
	img, want := e2e.SparseImage(t, 256<<10, 73)
	snap := backupSnapshot(t, data, "--store", st, "backup", "--id", "stdin", "--chunk-size", "64K",
		"piped.img:-", "file.img:"+img)
	dir := t.TempDir()
	for name, w := range map[string][]byte{"piped.img": data, "file.img": want} {
		out := filepath.Join(dir, name)
		e2e.MustCairn(t, "--store", st, "restore", snap, name, out)
		got, err := os.ReadFile(out)
		if err != nil || !bytes.Equal(got, w) {
			t.Fatalf("%s: restored %d bytes (%v), want %d", name, len(got), err, len(w))
		}
	}
	r := cairnIn(t, nil, "--store", st, "backup", "--id", "stdin-empty", "e.img:-")
	if r.Code != 1 || !strings.Contains(r.Stderr, "standard input was empty") {
		t.Fatalf("empty stdin: exit %d, %q", r.Code, r.Stderr)
	}
	if r := e2e.MustCairn(t, "--store", st, "snapshots", "--json"); strings.Contains(r.Stdout, "stdin-empty") {
		t.Fatalf("an empty stdin left a snapshot: %s", r.Stdout)
	}
	for _, args := range [][]string{{"a.img:-", "b.img:-"}, {"a.img:-", "c.blob:-"}, {"t.pxar:-"},
		{"index.json.blob:-"}, {"client.log.blob:-"}, {"../x.img:-"}, {".h.blob:-"}} {
		r := cairnIn(t, data, append([]string{"--store", st, "backup", "--id", "stdin-bad"}, args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "standard input") && !strings.Contains(r.Stderr, "archive name") {
			t.Errorf("%v: exit %d, %q", args, r.Code, r.Stderr)
		}
	}
}

// TestCLIIOBlob stores a file (NAME.blob:PATH) and standard input
// (NAME.blob:-) as blobs beside an image; cat, restore (to a file and to
// stdout), verify, a tape export and restore, and the mount give them back; a damaged blob fails
// verify and cat; a file over the blob limit is refused naming it and the
// limit.
func TestCLIIOBlob(t *testing.T) {
	st := e2e.SharedStore(t)
	conf := []byte("name: vm\nmemory: 2048\n")
	log := e2e.RandBytes(200<<10, 81) // incompressible: stored plain
	dir := t.TempDir()
	e2e.Write(t, filepath.Join(dir, "vm.conf"), string(conf), 0o644)
	img, _ := e2e.SparseImage(t, 128<<10, 82)
	snap := backupSnapshot(t, log, "--store", st, "backup", "--ns", "io/blob", "--type", "vm", "--id", "blob",
		"disk.img:"+img, "vm.conf.blob:"+filepath.Join(dir, "vm.conf"), "log.blob:-")
	for name, want := range map[string][]byte{"vm.conf.blob": conf, "log.blob": log} {
		if r := e2e.MustCairn(t, "--store", st, "cat", snap, name); r.Stdout != string(want) {
			t.Errorf("cat %s: %d bytes, want %d", name, len(r.Stdout), len(want))
		}
		out := filepath.Join(dir, "restored-"+name)
		e2e.MustCairn(t, "--store", st, "restore", snap, name, out)
		if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, want) {
			t.Errorf("restore %s: %d bytes %v", name, len(got), err)
		}
		if r := e2e.MustCairn(t, "--store", st, "restore", snap, name, "-"); r.Stdout != string(want) {
			t.Errorf("restore %s to stdout: %d bytes", name, len(r.Stdout))
		}
	}
	e2e.MustCairn(t, "--store", st, "verify", snap)
	if r := e2e.Cairn(t, nil, "--store", st, "restore", snap, "vm.conf.blob", filepath.Join(dir, "restored-vm.conf.blob")); r.Code == 0 {
		t.Error("restore over an existing file without --overwrite succeeded")
	}

	mnt := e2e.MountStore(t, st)
	for name, want := range map[string][]byte{"vm.conf.blob": conf, "log.blob": log} {
		got, err := os.ReadFile(filepath.Join(mnt, snap, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("mount %s: %d bytes %v", name, len(got), err)
		}
	}

	// tape: export the namespace, forget the snapshot (its blob files go
	// with it), restore it from tape into the store, read the blobs back
	drive := t.TempDir()
	e2e.MustCairn(t, "--store", st, "tape", "export", "--drive", drive, "--pool", "blob", "--tape-size", "8M", "--ns", "io/blob")
	e2e.MustCairn(t, "--store", st, "forget", snap)
	e2e.MustCairn(t, "--store", st, "tape", "restore", "--drive", drive, snap)
	for name, want := range map[string][]byte{"vm.conf.blob": conf, "log.blob": log} {
		if r := e2e.MustCairn(t, "--store", st, "cat", snap, name); r.Stdout != string(want) {
			t.Errorf("cat %s after tape: %d bytes, want %d", name, len(r.Stdout), len(want))
		}
	}

	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 200<<20); err != nil { // sparse: nothing to read
		t.Fatal(err)
	}
	r := e2e.Cairn(t, nil, "--store", st, "backup", "--type", "vm", "--id", "blob-big", "big.blob:"+big)
	if r.Code != 1 || !strings.Contains(r.Stderr, big) || !strings.Contains(r.Stderr, "134217716") {
		t.Errorf("blob over the limit: exit %d, %q", r.Code, r.Stderr)
	}

	// a damaged blob: verify and cat fail naming it
	dsnap := backupSnapshot(t, nil, "--store", st, "backup", "--type", "vm", "--id", "blob-bad",
		"vm.conf.blob:"+filepath.Join(dir, "vm.conf"))
	path := filepath.Join(st, strings.ReplaceAll(dsnap, "/", string(filepath.Separator)), "vm.conf.blob")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e2e.Cairn(t, nil, "--store", st, "verify", dsnap); r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "vm.conf.blob") {
		t.Errorf("verify of a damaged blob: exit %d, %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := e2e.Cairn(t, nil, "--store", st, "cat", dsnap, "vm.conf.blob"); r.Code == 0 {
		t.Error("cat of a damaged blob succeeded")
	}
}

// startSlowed starts the binary with the given stdout/stderr pipes held
// by the test: a pipe the test stops reading holds the command back (its
// writes block), so the test can signal it mid-work without timing.
func startSlowed(t *testing.T, args ...string) (*exec.Cmd, io.ReadCloser, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(e2e.Binary(), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, stdout, stderr
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal()) // killed: the command did not handle it
		}
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestCLIIOInterruptTree interrupts a tree restore with SIGINT: -vv names
// each entry on stderr, which the test stops reading after the first, so
// the restore is held mid-tree; after the signal it exits 130, says where
// it stopped with its counts, and leaves the marker file in the target; a
// restore with --overwrite then completes the tree and removes it.
func TestCLIIOInterruptTree(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	src := t.TempDir()
	const n = 2000 // their log lines fill a pipe many times over
	for i := range n {
		e2e.Write(t, filepath.Join(src, fmt.Sprintf("d%02d/file-with-a-longish-name-%04d", i%20, i)), fmt.Sprint(i), 0o644)
	}
	snap := backupSnapshot(t, nil, "--store", st, "backup", "--id", "interrupt-tree", "root.pxar:"+src)
	out := filepath.Join(t.TempDir(), "out")
	cmd, stdout, stderr := startSlowed(t, "--store", st, "-vv", "restore", snap, "root.pxar", out)
	go io.Copy(io.Discard, stdout)
	br := bufio.NewReader(stderr)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("restore ended before naming an entry: %v", err)
		}
		if strings.Contains(line, "msg=restore") && strings.Contains(line, "path=") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	code := exitCode(cmd.Wait())
	msg := string(rest)
	if code != 130 {
		t.Errorf("exit %d after SIGINT, want 130; stderr tail: %s", code, e2e.Tail(msg))
	}
	if !strings.Contains(msg, "restore interrupted at "+out+"/") || !strings.Contains(msg, " files, ") {
		t.Errorf("no message saying where it stopped: %s", e2e.Tail(msg))
	}
	marker, err := os.ReadFile(filepath.Join(out, ".cairn-restore-incomplete"))
	if err != nil || !strings.Contains(string(marker), "interrupted") {
		t.Fatalf("marker: %q %v", marker, err)
	}
	if got := len(e2e.Files(t, out)) - 1; got >= n {
		t.Fatalf("all %d files restored before the signal took effect", got)
	}
	again := e2e.Cairn(t, nil, "--store", st, "restore", snap, "root.pxar", out)
	if again.Code == 0 || !strings.Contains(again.Stderr, ".cairn-restore-incomplete, left by a restore that was interrupted: give --overwrite") {
		t.Errorf("restore into the interrupted one's target without --overwrite: exit %d, want the marker named: %s", again.Code, again.Stderr)
	}
	e2e.MustCairn(t, "--store", st, "restore", "--overwrite", snap, "root.pxar", out)
	if _, err := os.Stat(filepath.Join(out, ".cairn-restore-incomplete")); err == nil {
		t.Error("the marker is still there after a complete restore")
	}
	if got := len(e2e.Files(t, out)); got != n {
		t.Errorf("complete restore: %d files, want %d", got, n)
	}
}

// TestCLIIOInterruptImage interrupts an image restore to stdout, held by
// the test not reading it: exit 130 and a message that the stream is
// incomplete; less than the image came out.
func TestCLIIOInterruptImage(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	data := e2e.RandBytes(8<<20, 91)
	snap := backupSnapshot(t, data, "--store", st, "backup", "--id", "interrupt-img", "--chunk-size", "64K", "disk.img:-")
	cmd, stdout, stderr := startSlowed(t, "--store", st, "restore", "--json", snap, "disk.img", "-")
	errc := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(stderr); errc <- b }()
	first := make([]byte, 4096)
	if _, err := io.ReadFull(stdout, first); err != nil {
		t.Fatalf("no image data: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	msg := string(<-errc)
	code := exitCode(cmd.Wait())
	if code != 130 {
		t.Errorf("exit %d after SIGINT, want 130; stderr: %s", code, e2e.Tail(msg))
	}
	if !strings.Contains(msg, "restore interrupted after") || !strings.Contains(msg, "stdout is incomplete") ||
		!strings.Contains(msg, `"interrupted": true`) || !strings.Contains(msg, `"left": "partial_stream"`) {
		t.Errorf("stderr: %s", e2e.Tail(msg))
	}
	if got := len(first) + len(rest); got >= len(data) {
		t.Errorf("the whole image (%d bytes) came out", got)
	}
}
