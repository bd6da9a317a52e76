package keyfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadAll: key files load in order; one that fails names its file.
func TestLoadAll(t *testing.T) {
	none := filepath.Join("testdata", "none.key")
	ks, cs, err := LoadAll([]string{none, none}, nil)
	if err != nil || len(ks) != 2 || len(cs) != 2 {
		t.Fatalf("%d keys, %d configs, %v", len(ks), len(cs), err)
	}
	missing := filepath.Join(t.TempDir(), "missing.key")
	if _, _, err := LoadAll([]string{none, missing}, nil); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing key file: %v", err)
	}
}

// TestReadMaterial: a file is read whole, up to MaxMaterial; what names
// it in errors.
func TestReadMaterial(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.pem")
	if err := os.WriteFile(path, []byte("pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadMaterial("master key", path); err != nil || string(b) != "pem" {
		t.Errorf("%q, %v", b, err)
	}
	if err := os.WriteFile(path, make([]byte, MaxMaterial+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMaterial("master key", path); err == nil || !strings.HasPrefix(err.Error(), "master key: ") {
		t.Errorf("too large: %v", err)
	}
}
