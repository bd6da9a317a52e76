package drive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/jobs/tape/block"
)

func openDrive(t *testing.T) *Drive {
	t.Helper()
	d, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func writeFile(t *testing.T, d *Drive, data []byte) {
	t.Helper()
	w, err := d.WriteFile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(false); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, d *Drive) []byte {
	t.Helper()
	r, err := d.ReadFile()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteReadPositions(t *testing.T) {
	d := openDrive(t)
	if err := d.CreateTape("T1", 4<<20); err != nil {
		t.Fatal(err)
	}
	if err := d.Load("T1"); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		writeFile(t, d, fmt.Appendf(nil, "file %d", i))
	}
	if n, _ := d.FileCount(); n != 4 {
		t.Fatalf("FileCount = %d", n)
	}
	if err := d.MoveToFile(2); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, d); string(got) != "file 2" {
		t.Fatalf("file 2 = %q", got)
	}
	if pos, _ := d.Position(); pos != 3 {
		t.Fatalf("position after read = %d", pos)
	}
	if err := d.Rewind(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, d); string(got) != "file 0" {
		t.Fatalf("file 0 = %q", got)
	}
	// writing at position 1 removes files 1..3
	writeFile(t, d, []byte("new 1"))
	if n, _ := d.FileCount(); n != 2 {
		t.Fatalf("FileCount after overwrite = %d", n)
	}
	if _, err := os.Stat(d.filePath("T1", 2)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file 2 still exists: %v", err)
	}
	if _, err := d.ReadFile(); !errors.Is(err, ErrEndOfData) {
		t.Fatalf("read at end = %v", err)
	}
	if err := d.MoveToFile(1); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, d); string(got) != "new 1" {
		t.Fatalf("file 1 = %q", got)
	}
	if err := d.MoveToFile(3); !errors.Is(err, ErrPosition) {
		t.Fatalf("move beyond end = %v", err)
	}
	if err := d.MoveToEOM(); err != nil {
		t.Fatal(err)
	}
	if pos, _ := d.Position(); pos != 2 {
		t.Fatalf("EOM position = %d", pos)
	}
}

// The state files are PBS's: drive-status.json, tape-<label>.json and
// tapefile-<n>-<label>.json holding whole blocks.
func TestPBSLayout(t *testing.T) {
	d := openDrive(t)
	if err := d.CreateTape("vt1", 0); err != nil {
		t.Fatal(err)
	}
	if err := d.Load("vt1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, d, []byte("hello"))
	var st struct {
		CurrentTape struct {
			Name string `json:"name"`
			Pos  int    `json:"pos"`
		} `json:"current_tape"`
	}
	raw, err := os.ReadFile(filepath.Join(d.Dir(), "drive-status.json"))
	if err != nil || json.Unmarshal(raw, &st) != nil {
		t.Fatalf("drive-status.json: %v %s", err, raw)
	}
	if st.CurrentTape.Name != "vt1" || st.CurrentTape.Pos != 1 {
		t.Fatalf("drive status = %+v", st)
	}
	raw, err = os.ReadFile(filepath.Join(d.Dir(), "tape-vt1.json"))
	if err != nil || strings.Join(strings.Fields(string(raw)), "") != `{"files":1}` {
		t.Fatalf("tape-vt1.json = %s, %v", raw, err)
	}
	fi, err := os.Stat(filepath.Join(d.Dir(), "tapefile-0-vt1.json"))
	if err != nil || fi.Size() != block.Size {
		t.Fatalf("tape file: %v, size %d", err, fi.Size())
	}
	if err := d.Unload(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Loaded(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Loaded after unload = %v", err)
	}
	if _, err := d.WriteFile(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("write with empty drive = %v", err)
	}
}

func TestLEOMAndENOSPC(t *testing.T) {
	d := openDrive(t)
	const capacity = 2 << 20 // 8 blocks, LEOM zone 2 blocks
	if err := d.CreateTape("small", capacity); err != nil {
		t.Fatal(err)
	}
	if err := d.Load("small"); err != nil {
		t.Fatal(err)
	}
	w, err := d.WriteFile()
	if err != nil {
		t.Fatal(err)
	}
	n, err := w.Write(make([]byte, capacity))
	if !errors.Is(err, block.ErrLEOM) {
		t.Fatalf("Write = %d, %v; want LEOM", n, err)
	}
	if n != 7*block.PayloadSize {
		t.Fatalf("LEOM after %d payload bytes, want 7 blocks", n)
	}
	if err := w.Finish(true); err != nil {
		t.Fatalf("Finish after LEOM: %v", err)
	}
	if rem, _ := d.Remaining(); rem != 0 {
		t.Fatalf("Remaining = %d", rem)
	}
	w, err = d.WriteFile()
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(make([]byte, block.PayloadSize))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "tape small file 1") {
		t.Fatalf("write on full tape = %v", err)
	}
	w.Close()
	// the first file is intact and marked incomplete
	if err := d.Rewind(); err != nil {
		t.Fatal(err)
	}
	r, err := d.ReadFile()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || len(got) != n || !r.Incomplete() {
		t.Fatalf("read back %d bytes, incomplete=%v, %v", len(got), r.Incomplete(), err)
	}
	// writing at file 0 again frees the space
	if err := d.Rewind(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, d, []byte("x"))
	if rem, _ := d.Remaining(); rem != capacity-block.Size {
		t.Fatalf("Remaining after rewrite = %d", rem)
	}
}

func TestBrokenFiles(t *testing.T) {
	d := openDrive(t)
	if err := d.CreateTape("T", 0); err != nil {
		t.Fatal(err)
	}
	if err := d.Load("T"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, d, bytes.Repeat([]byte("a"), 2*block.PayloadSize))
	// an aborted write: no end-of-stream block
	w, err := d.WriteFile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte("b"), block.PayloadSize+1)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// cut file 0 inside its last block
	if err := os.Truncate(d.filePath("T", 0), 2*block.Size+100); err != nil {
		t.Fatal(err)
	}
	for n, want := range []error{block.ErrTruncated, block.ErrTruncated} {
		if err := d.MoveToFile(n); err != nil {
			t.Fatal(err)
		}
		r, err := d.ReadFile()
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(r)
		r.Close()
		if !errors.Is(err, want) || !strings.Contains(err.Error(), fmt.Sprintf("tape T file %d", n)) {
			t.Fatalf("file %d: %v, want %v naming the file", n, err, want)
		}
	}
}

func TestLockAndTapes(t *testing.T) {
	d := openDrive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Open(ctx, d.Dir()); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Open = %v", err)
	}
	for _, l := range []string{"b", "a"} {
		if err := d.CreateTape(l, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.CreateTape("a", 0); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate CreateTape = %v", err)
	}
	if err := d.CreateTape("../x", 0); !errors.Is(err, ErrBadLabel) {
		t.Fatalf("bad label = %v", err)
	}
	if err := d.Load("zz"); !errors.Is(err, ErrNoTape) {
		t.Fatalf("Load unknown = %v", err)
	}
	if err := d.Load("a"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, d, []byte("1"))
	tapes, err := d.Tapes()
	if err != nil || len(tapes) != 2 || tapes[0].Label != "a" || !tapes[0].Loaded ||
		tapes[0].Used != block.Size || tapes[0].Capacity != DefaultCapacity || tapes[1].Files != 0 {
		t.Fatalf("Tapes = %+v, %v", tapes, err)
	}
	if err := d.RemoveTape("a"); err == nil {
		t.Fatal("removed a loaded tape")
	}
	if err := d.Format(); err != nil {
		t.Fatal(err)
	}
	if n, _ := d.FileCount(); n != 0 {
		t.Fatalf("files after Format = %d", n)
	}
	if err := d.RemoveTape("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.TapeInfo("b"); !errors.Is(err, ErrNoTape) {
		t.Fatalf("removed tape still there: %v", err)
	}
	d.Close()
	d2, err := Open(context.Background(), d.Dir())
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	d2.Close()
}

func TestBadStateFile(t *testing.T) {
	d := openDrive(t)
	if err := os.WriteFile(filepath.Join(d.Dir(), "tape-T.json"), []byte("{nonsense"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Load("T"); !errors.Is(err, ErrBadState) {
		t.Fatalf("Load with corrupt index = %v", err)
	}
}
