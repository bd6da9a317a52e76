package keyfile

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/crypt"
)

var small = map[KDF]Params{
	Scrypt: {KDF: Scrypt, N: 1024, R: 8, P: 1, Salt: bytes.Repeat([]byte{7}, 32)},
	PBKDF2: {KDF: PBKDF2, Iter: 1000, Salt: bytes.Repeat([]byte{9}, 32)},
	None:   {KDF: None},
}

// TestCreateLoad writes a key file per kdf, loads it back and changes its
// passphrase.
func TestCreateLoad(t *testing.T) {
	t.Parallel()
	for kdf, p := range small {
		key, err := crypt.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		c, err := NewWithParams(key, p, []byte("first pass"), created)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "k.key")
		if err := c.WriteNew(path); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", kdf, fi.Mode(), err)
		}
		if err := c.WriteNew(path); !errors.Is(err, os.ErrExist) {
			t.Errorf("%s: second WriteNew: %v, want ErrExist", kdf, err)
		}
		got, c2, err := Load(path, passphrase("first pass"))
		if err != nil {
			t.Fatalf("%s: %v", kdf, err)
		}
		if !bytes.Equal(got.Export(), key.Export()) || !c2.Created.Equal(created) {
			t.Errorf("%s: loaded another key or time %v", kdf, c2.Created)
		}
		if kdf != None {
			if _, _, err := Load(path, passphrase("other pass")); !errors.Is(err, ErrPassphrase) {
				t.Errorf("%s: wrong passphrase: %v", kdf, err)
			}
		}
		n, err := c2.ChangePassphrase(got, PBKDF2, []byte("second pass"), created.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Replace(path); err != nil {
			t.Fatal(err)
		}
		got2, c3, err := Load(path, passphrase("second pass"))
		if err != nil {
			t.Fatalf("%s after change: %v", kdf, err)
		}
		if !bytes.Equal(got2.Export(), key.Export()) || !c3.Created.Equal(created) || !c3.Modified.Equal(created.Add(time.Hour)) {
			t.Errorf("%s after change: created %v modified %v", kdf, c3.Created, c3.Modified)
		}
		if _, _, err := Load(path, passphrase("first pass")); !errors.Is(err, ErrPassphrase) {
			t.Errorf("%s: old passphrase after change: %v", kdf, err)
		}
		if _, err := NewWithParams(key, small[Scrypt], []byte("abc"), created); kdf == Scrypt && !errors.Is(err, ErrShortPassphrase) {
			t.Errorf("short passphrase: %v", err)
		}
		key.Wipe()
	}
}

// TestFingerprintMismatch: a key file whose fingerprint is another key's.
func TestFingerprintMismatch(t *testing.T) {
	b := mutate(t, "none.key", `"fingerprint":"3d`, `"fingerprint":"3e`)
	path := filepath.Join(t.TempDir(), "fp.key")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	k, _, err := Load(path, nil)
	if k != nil || !errors.Is(err, ErrFingerprint) || !strings.Contains(err.Error(), path) {
		t.Errorf("%v, want ErrFingerprint naming the file", err)
	}
}

// TestPythonLoads has the independent implementation load a key file cairn
// wrote with PBS's default parameters.
func TestPythonLoads(t *testing.T) {
	t.Parallel()
	if err := exec.Command("python3", "-c", "import cryptography").Run(); err != nil {
		t.Skip("python3 with cryptography is not installed; the vectors still test the format")
	}
	for _, kdf := range []KDF{Scrypt, PBKDF2, None} {
		key, err := crypt.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(key, kdf, []byte("python pass"), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "cairn.key")
		if err := c.WriteNew(path); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("python3", "testdata/pbs_keyfile.py", "load", path)
		cmd.Stdin = strings.NewReader("python pass")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: python: %v", kdf, err)
		}
		var r struct{ Key, Fingerprint string }
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		if r.Fingerprint != key.Fingerprint().String() || r.Key != hex.EncodeToString(key.Export()) {
			t.Errorf("%s: python %s, cairn %s", kdf, r.Fingerprint, key.Fingerprint())
		}
		key.Wipe()
	}
}
