package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreImage restores an image with holes, data and repeated chunks
// to a file with 1 and 8 threads and to stdout, and compares.
func TestRestoreImage(t *testing.T) {
	st := sharedStore(t)
	path, img := sparseImage(t, 6<<20+4321, 11)
	r := mustCairn(t, "--store", st, "backup", "--type", "vm", "--id", "restore", "--chunk-size", "256K", "--json", "disk.img:"+path)
	var sum struct{ Snapshot string }
	json.Unmarshal([]byte(r.stdout), &sum)
	dir := t.TempDir()
	var outs [][]byte
	for _, threads := range []string{"1", "8", "2 --no-sync"} {
		out := filepath.Join(dir, "out"+strings.Fields(threads)[0])
		args := append([]string{"--store", st, "restore", "--threads"}, strings.Fields(threads)...)
		res := mustCairn(t, append(args, sum.Snapshot, "disk.img", out)...)
		if !strings.Contains(res.stdout, "restore complete (bytes=") {
			t.Fatalf("no final line: %q", res.stdout)
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
	res := mustCairn(t, "--store", st, "restore", sum.Snapshot, "disk.img", "-")
	if !bytes.Equal([]byte(res.stdout), img) {
		t.Fatal("stdout restore differs")
	}
	// an existing target is refused without --overwrite
	again := cairn(t, nil, "--store", st, "restore", sum.Snapshot, "disk.img", filepath.Join(dir, "out1"))
	if again.code == 0 || !strings.Contains(again.stderr, "--overwrite") {
		t.Fatalf("existing target: exit %d %q", again.code, again.stderr)
	}
	mustCairn(t, "--store", st, "restore", "--overwrite", sum.Snapshot, "disk.img", filepath.Join(dir, "out1"))
}

// TestRestoreCacheSize restores a file archive with the smallest chunk
// cache --cache-size allows (every chunk evicts another) and with a
// large one: the same tree as the source both ways. Values that are not
// sizes, or outside 4M..64G, are usage errors (exit 2) naming the flag,
// whatever the archive named, before anything is written.
func TestRestoreCacheSize(t *testing.T) {
	st := sharedStore(t)
	src := t.TempDir()
	for i, n := range []int{12 << 20, 5<<20 + 3, 100} {
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%d", i)), randBytes(n, uint64(40+i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := mustCairn(t, "--store", st, "backup", "--type", "ct", "--id", "cache-size", "--json", "tree.pxar:"+src)
	snap := parsePxarSummary(t, r.stdout).Snapshot
	want := treeListing(t, src)
	for _, size := range []string{"4M", "1G", "64G"} {
		out := filepath.Join(t.TempDir(), "out")
		mustCairn(t, "--store", st, "restore", "--cache-size", size, snap, "tree.pxar", out)
		if got := treeListing(t, out); got != want {
			t.Fatalf("--cache-size %s: restore differs from the source:\n%s\n---- want\n%s", size, got, want)
		}
	}
	for _, bad := range []string{"", "abc", "-1", "0", "4095K", "3M", "65G", "1T", "99999999999999999999"} {
		for _, archive := range []string{"tree.pxar", "other.img"} {
			out := filepath.Join(t.TempDir(), "out")
			r := cairn(t, nil, "--store", st, "restore", "--cache-size", bad, snap, archive, out)
			if r.code != 2 || !strings.Contains(r.stderr, "--cache-size") {
				t.Errorf("--cache-size %q (%s): exit %d %q, want a usage error naming the flag", bad, archive, r.code, r.stderr)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Errorf("--cache-size %q (%s): the target was made", bad, archive)
			}
		}
	}
}
