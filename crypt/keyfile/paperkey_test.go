package keyfile

import (
	"errors"
	"strings"
	"testing"
)

// TestPaperkey lays out a key file and the master key as the Python
// implementation of PBS's paperkey.rs does (without the QR codes).
func TestPaperkey(t *testing.T) {
	for _, name := range []string{"scrypt.key", "master-private.pem"} {
		blocks, err := Paperkey(name, readTestdata(t, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := PaperkeyText(blocks, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := string(readTestdata(t, name+".paperkey")); got != want {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
		}
		var seen []string
		withQR, _ := PaperkeyText(blocks, func(d string) (string, error) { seen = append(seen, d); return "[QR]", nil })
		if len(seen) != len(blocks) || strings.Count(withQR, "[QR]\n") != len(blocks) {
			t.Errorf("%s: %d QR codes for %d blocks", name, len(seen), len(blocks))
		}
	}
	if _, err := Paperkey("x", []byte("hello")); !errors.Is(err, ErrPaperkey) || !strings.Contains(err.Error(), "x") {
		t.Errorf("not a key: %v", err)
	}
	if _, err := Paperkey("y", []byte("-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")); !errors.Is(err, ErrPaperkey) {
		t.Errorf("short PEM: %v", err)
	}
}
