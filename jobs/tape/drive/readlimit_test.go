package drive

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The drive's state files and the media inventory are read only up to a
// bound: a huge one fails naming it, a missing one keeps its error.
func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "drive-status.json")
	if err := os.WriteFile(path, []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFileLimit(path, 7); err != nil || string(b) != `{"x":1}` {
		t.Fatalf("file at the limit: %q %v", b, err)
	}
	if _, err := ReadFileLimit(path, 6); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("file over the limit: %v", err)
	}
	if err := os.Truncate(path, 1<<40); err != nil {
		t.Fatal(err)
	}
	var st struct{}
	if err := readJSON(path, &st); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("1 TiB state file: %v", err)
	}
	if _, err := ReadFileLimit(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}
