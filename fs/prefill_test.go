package fs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/pxar"
)

// TestPrefill reads a directory of small files the way tar does: after
// the first file, the others come from the page cache, stored there
// ahead (no READ request each), and hold the right bytes.
func TestPrefill(t *testing.T) {
	needFUSE(t)
	var meta, payload bytes.Buffer
	enc, err := pxar.NewEncoder(&meta, &payload, pxMeta(pxar.ModeIFDIR|0o755, 1600000000))
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.CreateDirectory("d", pxMeta(pxar.ModeIFDIR|0o755, 1600000000)); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for i := range 40 {
		name := fmt.Sprintf("f%02d", i)
		size := i*1500 + 7 // up to 58 KiB, and one empty file
		if i == 5 {
			size = 0
		}
		data := randomData(uint64(100+i), size)
		files[name] = data
		if _, err := enc.AddFile(name, pxMeta(pxar.ModeIFREG|0o644, 1600000001), uint64(len(data)), bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	// too big to prefill: its read is a READ, whenever it comes
	files["zbig"] = randomData(99, prefillMaxFile+1)
	if _, err := enc.AddFile("zbig", pxMeta(pxar.ModeIFREG|0o644, 1600000001), uint64(len(files["zbig"])), bytes.NewReader(files["zbig"])); err != nil {
		t.Fatal(err)
	}
	if err := enc.FinishDirectory(); err != nil {
		t.Fatal(err)
	}
	if err := enc.CreateDirectory("e", pxMeta(pxar.ModeIFDIR|0o755, 1600000000)); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		name := fmt.Sprintf("g%02d", i)
		data := randomData(uint64(200+i), 3000+i)
		files["../e/"+name] = data
		if _, err := enc.AddFile(name, pxMeta(pxar.ModeIFREG|0o644, 1600000001), uint64(len(data)), bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.FinishDirectory(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	s, snap := splitArchiveStore(t, "pf", meta.Bytes(), payload.Bytes())

	srv, mnt, logs := mountT(t, Options{Store: s, Trees: PxarTrees{}, Debug: true})
	dir := filepath.Join(mnt, snap.String(), "root.pxar", "d")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 41 {
		t.Fatalf("list: %d entries (%v)", len(ents), err)
	}
	if n := srv.Stats().Prefilled; n != 0 {
		t.Fatalf("a listing without reads prefilled %d files", n)
	}
	read := func(name string) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, files[name]) {
			t.Fatalf("%s: %d bytes (%v), want %d", name, len(got), err, len(files[name]))
		}
	}
	read("f00")
	// the files after f00 (but f05, which is empty) go to the page cache
	deadline := time.Now().Add(20 * time.Second)
	for srv.Stats().Prefilled < 38 && time.Now().Before(deadline) { // f01-f39 but empty f05
		time.Sleep(5 * time.Millisecond)
	}
	if n := srv.Stats().Prefilled; n < 20 {
		t.Fatalf("%d files prefilled after reading the first of %d", n, len(files))
	}
	reads := regexp.MustCompile(`rx \d+: READ `)
	before := len(reads.FindAllString(logs.String(), -1))
	for i := 1; i < 40; i++ {
		read(fmt.Sprintf("f%02d", i))
	}
	if more := len(reads.FindAllString(logs.String(), -1)) - before; more > 3 {
		t.Errorf("reading 39 prefilled files sent %d READ requests", more)
	}

	// a directory listed while files are read has its first files
	// prefilled before any of them is read (zbig is read just before, so
	// "while" holds however long the prefill above took)
	read("zbig")
	had := srv.Stats().Prefilled
	deadline = time.Now().Add(20 * time.Second)
	if ents, err := os.ReadDir(filepath.Join(dir, "../e")); err != nil || len(ents) != 10 {
		t.Fatalf("list e: %d entries (%v)", len(ents), err)
	}
	for srv.Stats().Prefilled < had+10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	before = len(reads.FindAllString(logs.String(), -1))
	for i := range 10 {
		read(fmt.Sprintf("../e/g%02d", i))
	}
	if more := len(reads.FindAllString(logs.String(), -1)) - before; more > 0 {
		t.Errorf("reading 10 files of a directory listed while reading sent %d READ requests", more)
	}
}
