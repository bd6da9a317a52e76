package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestBackupCat is the quick start in a test: init, back up an image with
// holes and data, cat it back and compare byte for byte.
func TestBackupCat(t *testing.T) {
	st := e2e.SharedStore(t)
	path, img := e2e.SparseImage(t, 9<<20+333, 1)
	r := e2e.MustCairn(t, "--store", st, "backup", "--type", "vm", "--id", "100", "--chunk-size", "1M", "--json", "disk.img:"+path)
	var sum struct {
		Snapshot  string `json:"snapshot"`
		Bytes     int64  `json:"bytes"`
		ZeroBytes int64  `json:"zero_bytes"`
		NewChunks int64  `json:"new_chunks"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &sum); err != nil {
		t.Fatalf("summary %q: %v", r.Stdout, err)
	}
	if sum.Bytes != int64(len(img)) || sum.ZeroBytes == 0 || !strings.HasPrefix(sum.Snapshot, "vm/100/") {
		t.Fatalf("summary %+v", sum)
	}
	for _, ref := range []string{sum.Snapshot, "vm/100", "vm/100/latest"} {
		out := e2e.MustCairn(t, "--store", st, "cat", ref, "disk.img")
		if !bytes.Equal([]byte(out.Stdout), img) {
			t.Fatalf("cat %s: %d bytes differ from the %d-byte image", ref, len(out.Stdout), len(img))
		}
	}
	// an unchanged second backup writes no new chunk
	time.Sleep(1100 * time.Millisecond) // snapshot names have one-second resolution
	r = e2e.MustCairn(t, "--store", st, "backup", "--type", "vm", "--id", "100", "--chunk-size", "1M", "--json", "disk.img:"+path)
	json.Unmarshal([]byte(r.Stdout), &sum)
	if sum.NewChunks != 0 {
		t.Fatalf("second backup wrote %d new chunks", sum.NewChunks)
	}
	list := e2e.MustCairn(t, "--store", st, "snapshots")
	if strings.Count(list.Stdout, "vm/100/") != 2 {
		t.Fatalf("snapshots:\n%s", list.Stdout)
	}
}

// TestBadInput checks that each fault gives a clear error, names what is
// wrong and exits non-zero.
func TestBadInput(t *testing.T) {
	st := e2e.SharedStore(t)
	notStore := t.TempDir()
	path, _ := e2e.SparseImage(t, 1<<20, 2)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"not a store", []string{"--store", notStore, "snapshots"}, "not a cairn/PBS datastore"},
		{"store missing", []string{"--store", filepath.Join(notStore, "x"), "snapshots"}, "no such file"},
		{"source missing", []string{"--store", st, "backup", "--id", "x", "disk.img:/nonexistent/disk"}, "/nonexistent/disk"},
		{"chunk size", []string{"--store", st, "backup", "--id", "x", "--chunk-size", "3M", "disk.img:" + path}, "power of two"},
		{"bad type", []string{"--store", st, "backup", "--type", "pc", "--id", "x", "disk.img:" + path}, "backup type"},
		{"bad spec", []string{"--store", st, "backup", "--id", "x", "disk.iso:" + path}, "NAME.img"},
		{"bad snapshot", []string{"--store", st, "cat", "vm/100/yesterday", "disk.img"}, "snapshot time"},
		{"no snapshot", []string{"--store", st, "cat", "vm/none", "disk.img"}, "not found"},
		{"init twice", []string{"--store", st, "init"}, "already exists"},
		{"chunker size", []string{"bench", "chunker", "--dynamic", "5M", path}, "power of two"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e2e.Cairn(t, nil, tc.args...)
			if r.Code == 0 || !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q, want it to mention %q", r.Code, r.Stderr, tc.want)
			}
			if strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "goroutine ") {
				t.Fatalf("panicked: %s", r.Stderr)
			}
		})
	}
}

// TestCorruptChunkCat: cat of an archive with a flipped chunk byte fails
// naming the chunk and saying it is corrupt (its data fails its digest:
// a read checks that, not the blob's CRC), and the rest of the store
// stays usable.
func TestCorruptChunkCat(t *testing.T) {
	st := e2e.SharedStore(t)
	path, _ := e2e.SparseImage(t, 4<<20, 3)
	r := e2e.MustCairn(t, "--store", st, "backup", "--type", "ct", "--id", "corrupt", "--chunk-size", "1M", "--json", "disk.img:"+path)
	var sum struct{ Snapshot string }
	json.Unmarshal([]byte(r.Stdout), &sum)
	fidx, _ := os.ReadFile(filepath.Join(st, strings.ReplaceAll(sum.Snapshot, "/", "/"), "disk.img.fidx"))
	digest := fidx[4096 : 4096+32]
	hexd := hexString(digest)
	chunkPath := filepath.Join(st, ".chunks", hexd[:4], hexd)
	blob, err := os.ReadFile(chunkPath)
	if err != nil {
		t.Fatal(err)
	}
	orig := bytes.Clone(blob)
	blob[100] ^= 0x80
	os.WriteFile(chunkPath, blob, 0o644)
	defer os.WriteFile(chunkPath, orig, 0o644)
	c := e2e.Cairn(t, nil, "--store", st, "cat", sum.Snapshot, "disk.img")
	if c.Code == 0 || !strings.Contains(c.Stderr, hexd) || !strings.Contains(c.Stderr, "corrupt chunk") {
		t.Fatalf("exit %d stderr %q", c.Code, c.Stderr)
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

// TestKilledBackup kills a backup (SIGKILL) while it reads its source:
// no snapshot looks complete, and the next backup works.
func TestKilledBackup(t *testing.T) {
	st := e2e.SharedStore(t)
	good, img := e2e.SparseImage(t, 2<<20, 4)
	e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", "killed", "--chunk-size", "64K", "disk.img:"+good)
	for _, after := range []int{0, 1 << 20, 3 << 20} {
		fifo := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond) // a new snapshot second
		cmd := exec.Command(e2e.Binary(), "--store", st, "backup", "--type", "host", "--id", "killed", "--chunk-size", "64K", "disk.img:"+fifo)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if after > 0 {
			w.Write(e2e.RandBytes(after, uint64(after)))
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		w.Close()
	}
	var rows []struct {
		Snapshot string `json:"snapshot"`
		Finished bool   `json:"finished"`
	}
	out := e2e.MustCairn(t, "--store", st, "snapshots", "--json")
	json.Unmarshal([]byte(out.Stdout), &rows)
	finished := 0
	for _, r := range rows {
		if strings.HasPrefix(r.Snapshot, "host/killed/") && r.Finished {
			finished++
		}
	}
	if finished != 1 {
		t.Fatalf("%d finished snapshots after killed backups, want 1:\n%s", finished, out.Stdout)
	}
	c := e2e.MustCairn(t, "--store", st, "cat", "host/killed", "disk.img")
	if !bytes.Equal([]byte(c.Stdout), img) {
		t.Fatal("latest is not the good snapshot")
	}
	time.Sleep(1100 * time.Millisecond)
	e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", "killed", "--chunk-size", "64K", "disk.img:"+good)
}

// TestBenchChunkerPrint checks --print lines add up to the file.
func TestBenchChunkerPrint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	os.WriteFile(path, e2e.RandBytes(3<<20, 5), 0o644)
	for _, bs := range []string{"8k", "4M"} {
		r := e2e.MustCairn(t, "bench", "chunker", "--dynamic", "256K", "--buffer-size", bs, "--print", path)
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		var next int64
		for _, l := range lines[:len(lines)-1] {
			var off, n int64
			var h string
			if _, err := fmt.Sscan(l, &off, &n, &h); err != nil || off != next || len(h) != 64 {
				t.Fatalf("line %q", l)
			}
			next += n
		}
		if next != 3<<20 || !strings.Contains(lines[len(lines)-1], "MB/s") {
			t.Fatalf("chunks cover %d bytes; last line %q", next, lines[len(lines)-1])
		}
	}
}
