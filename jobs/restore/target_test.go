package restore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenTarget: "-" is the stream; a file is written under a temporary
// name and renamed into place only when finished, else removed; an
// existing target is refused without overwrite and replaced with it.
func TestOpenTarget(t *testing.T) {
	var out bytes.Buffer
	tg, done, err := OpenTarget("-", &out, false, false)
	if err != nil || tg.Stream != &out || done(true) != nil {
		t.Fatalf("stdout target: %+v, %v", tg, err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "disk.img")
	write := func(finished, overwrite bool) error {
		tg, done, err := OpenTarget(path, nil, overwrite, true)
		if err != nil {
			return err
		}
		if _, err := tg.File.WriteString("data"); err != nil {
			t.Fatal(err)
		}
		return done(finished)
	}
	if err := write(false, false); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("an unfinished restore left %v", left)
	}
	if err := write(true, false); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "data" {
		t.Fatalf("restored %q, %v", b, err)
	}
	if err := write(true, false); err == nil || !strings.Contains(err.Error(), "give --overwrite") {
		t.Errorf("existing target without overwrite: %v", err)
	}
	if err := write(true, true); err != nil {
		t.Errorf("overwrite: %v", err)
	}
	if _, _, err := OpenTarget(dir, nil, true, false); err == nil || !strings.Contains(err.Error(), "neither a file nor a block device") {
		t.Errorf("a directory as target: %v", err)
	}
	if IsDevice(path) || !IsDevice("/dev/null") {
		t.Error("IsDevice")
	}
	if err := SyncTree(dir); err != nil {
		t.Error(err)
	}
}
