package passphrase

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: the first line without its line end (LF or CRLF), a
// file without one whole; a first line longer than Max is refused.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{"secret\nrest\n": "secret", "crlf\r\n": "crlf", "bare": "bare", "": ""} {
		p := filepath.Join(dir, "pw")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%q: %q, %v; want %q", body, got, err, want)
		}
	}
	p := filepath.Join(dir, "long")
	if err := os.WriteFile(p, bytes.Repeat([]byte("x"), Max+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("too long: %v", err)
	}
}

// TestRead: the flag's file first, then the environment's; without
// either and no terminal, an error naming the variable.
func TestRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(p, []byte("from-env\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_PW_FILE", p)
	if got, err := Read("", "TEST_PW_FILE", nil, nil, "x", false); err != nil || string(got) != "from-env" {
		t.Errorf("from the environment: %q, %v", got, err)
	}
	t.Setenv("TEST_PW_FILE", "")
	if _, err := Read("", "TEST_PW_FILE", strings.NewReader(""), nil, "x", false); err == nil || !strings.Contains(err.Error(), "$TEST_PW_FILE") {
		t.Errorf("no terminal: %v", err)
	}
}
