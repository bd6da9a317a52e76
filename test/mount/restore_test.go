package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestRestoreImage restores an image with holes, data and repeated chunks
// to a file with 1 and 8 threads and to stdout, and compares.
func TestRestoreImage(t *testing.T) {
	st := e2e.SharedStore(t)
	path, img := e2e.SparseImage(t, 6<<20+4321, 11)
	r := e2e.MustCairn(t, "--store", st, "backup", "--type", "vm", "--id", "restore", "--chunk-size", "256K", "--json", "disk.img:"+path)
	var sum struct{ Snapshot string }
	json.Unmarshal([]byte(r.Stdout), &sum)
	dir := t.TempDir()
	var outs [][]byte
	for _, threads := range []string{"1", "8", "2 --no-sync"} {
		out := filepath.Join(dir, "out"+strings.Fields(threads)[0])
		args := append([]string{"--store", st, "restore", "--threads"}, strings.Fields(threads)...)
		res := e2e.MustCairn(t, append(args, sum.Snapshot, "disk.img", out)...)
		if !strings.Contains(res.Stdout, "restore complete (bytes=") {
			t.Fatalf("no final line: %q", res.Stdout)
		}
		got, _ := os.ReadFile(out)
		if !bytes.Equal(got, img) {
			t.Fatalf("threads %s: restored image differs", threads)
		}
		outs = append(outs, got)
	}
	if !bytes.Equal(outs[0], outs[1]) || !bytes.Equal(outs[0], outs[2]) {
		t.Fatal("1, 8 and 2 threads (without sync) differ")
	}
	res := e2e.MustCairn(t, "--store", st, "restore", sum.Snapshot, "disk.img", "-")
	if !bytes.Equal([]byte(res.Stdout), img) {
		t.Fatal("stdout restore differs")
	}
	// an existing target is refused without --overwrite
	again := e2e.Cairn(t, nil, "--store", st, "restore", sum.Snapshot, "disk.img", filepath.Join(dir, "out1"))
	if again.Code == 0 || !strings.Contains(again.Stderr, "--overwrite") {
		t.Fatalf("existing target: exit %d %q", again.Code, again.Stderr)
	}
	e2e.MustCairn(t, "--store", st, "restore", "--overwrite", sum.Snapshot, "disk.img", filepath.Join(dir, "out1"))
}

// TestRestoreCacheSize restores a file archive with the smallest chunk
// cache --cache-size allows (every chunk evicts another) and with a
// large one: the same tree as the source both ways. Values that are not
// sizes, or outside 4M..64G, are usage errors (exit 2) naming the flag,
// whatever the archive named, before anything is written.
func TestRestoreCacheSize(t *testing.T) {
	st := e2e.SharedStore(t)
	src := t.TempDir()
	for i, n := range []int{12 << 20, 5<<20 + 3, 100} {
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%d", i)), e2e.RandBytes(n, uint64(40+i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := e2e.MustCairn(t, "--store", st, "backup", "--type", "ct", "--id", "cache-size", "--json", "tree.pxar:"+src)
	snap := e2e.ParsePxarSummary(t, r.Stdout).Snapshot
	want := e2e.TreeListing(t, src)
	for _, size := range []string{"4M", "1G", "64G"} {
		out := filepath.Join(t.TempDir(), "out")
		e2e.MustCairn(t, "--store", st, "restore", "--cache-size", size, snap, "tree.pxar", out)
		if got := e2e.TreeListing(t, out); got != want {
			t.Fatalf("--cache-size %s: restore differs from the source:\n%s\n---- want\n%s", size, got, want)
		}
	}
	for _, bad := range []string{"", "abc", "-1", "0", "4095K", "3M", "65G", "1T", "99999999999999999999"} {
		for _, archive := range []string{"tree.pxar", "other.img"} {
			out := filepath.Join(t.TempDir(), "out")
			r := e2e.Cairn(t, nil, "--store", st, "restore", "--cache-size", bad, snap, archive, out)
			if r.Code != 2 || !strings.Contains(r.Stderr, "--cache-size") {
				t.Errorf("--cache-size %q (%s): exit %d %q, want a usage error naming the flag", bad, archive, r.Code, r.Stderr)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Errorf("--cache-size %q (%s): the target was made", bad, archive)
			}
		}
	}
}
