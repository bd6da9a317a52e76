package test

import (
	"bytes"
	"encoding/json"
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
