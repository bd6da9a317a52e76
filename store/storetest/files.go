package storetest

import (
	"os"
	"path/filepath"
	"testing"
)

// TempFile writes data into a file of the test's own and returns it
// open for reading, closed when the test ends.
func TempFile(t testing.TB, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
