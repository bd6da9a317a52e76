package keyfile

import (
	"bytes"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMasterVectors decrypts the Python-made master key and recovers
// pbkdf2.key from the blob Python wrapped for its public half.
func TestMasterVectors(t *testing.T) {
	e := loadExpected(t)
	priv, err := ParseMasterPrivate("master-private.pem", readTestdata(t, "master-private.pem"), []byte("master pass"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParseMasterPublic("master-public.pem", readTestdata(t, "master-public.pem"))
	if err != nil || !pub.Equal(&priv.PublicKey) {
		t.Fatalf("public key: %v", err)
	}
	c, err := UnwrapRSA(priv, "rsa-encrypted.key.blob", readTestdata(t, "rsa-encrypted.key.blob"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := c.Marshal()
	if !bytes.Equal(out, readTestdata(t, "pbkdf2.key")) {
		t.Errorf("recovered key file\n%s\nwant pbkdf2.key", out)
	}
	k, err := c.Decrypt("recovered", passphrase(e.Passphrase))
	if err != nil || hex.EncodeToString(k.Export()) != e.Key {
		t.Fatalf("recovered key: %v", err)
	}
	k.Wipe()

	// Wrong master passphrase; a flipped bit in the blob.
	if _, err := ParseMasterPrivate("m.pem", readTestdata(t, "master-private.pem"), []byte("wrong pass")); !errors.Is(err, ErrPassphrase) || !strings.Contains(err.Error(), "m.pem") {
		t.Errorf("wrong master passphrase: %v", err)
	}
	blob := readTestdata(t, "rsa-encrypted.key.blob")
	blob[100] ^= 1
	if c, err := UnwrapRSA(priv, "b.blob", blob); c != nil || !errors.Is(err, ErrMaster) || !strings.Contains(err.Error(), "b.blob") {
		t.Errorf("damaged blob: %v", err)
	}
	if _, err := ParseMasterPrivate("p.pem", readTestdata(t, "master-public.pem"), []byte("master pass")); !errors.Is(err, ErrMaster) {
		t.Errorf("public key as private: %v", err)
	}
}

// TestMasterRoundTrip wraps with the master public key, re-encodes the
// private key under a new passphrase and has Python recover the blob.
func TestMasterRoundTrip(t *testing.T) {
	priv, err := ParseMasterPrivate("m", readTestdata(t, "master-private.pem"), []byte("master pass"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("scrypt.key", readTestdata(t, "scrypt.key"))
	if err != nil {
		t.Fatal(err)
	}
	blob, err := WrapRSA(&priv.PublicKey, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(blob) != priv.Size() {
		t.Fatalf("blob of %d bytes, want %d", len(blob), priv.Size())
	}
	privPEM, pubPEM, err := MarshalMaster(priv, []byte("other pass"))
	if err != nil {
		t.Fatal(err)
	}
	priv2, err := ParseMasterPrivate("m2", privPEM, []byte("other pass"))
	if err != nil || !priv2.Equal(priv) {
		t.Fatalf("re-encoded master key: %v", err)
	}
	if pub, err := ParseMasterPublic("pub", pubPEM); err != nil || !pub.Equal(&priv.PublicKey) {
		t.Fatalf("public PEM: %v", err)
	}
	c2, err := UnwrapRSA(priv2, "blob", blob)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.Marshal()
	b, _ := c2.Marshal()
	if !bytes.Equal(a, b) {
		t.Errorf("unwrapped\n%s\nwant\n%s", b, a)
	}
	if exec.Command("python3", "-c", "import cryptography").Run() != nil {
		t.Skip("python3 with cryptography is not installed")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "m.pem"), privPEM, 0o600)
	os.WriteFile(filepath.Join(dir, "k.blob"), blob, 0o600)
	cmd := exec.Command("python3", "testdata/pbs_keyfile.py", "recover", filepath.Join(dir, "m.pem"), filepath.Join(dir, "k.blob"))
	cmd.Stdin = strings.NewReader("other pass")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != string(a) {
		t.Errorf("python recover: %v\n%s", err, out)
	}
}

func FuzzParseMasterPrivate(f *testing.F) {
	b, err := os.ReadFile("testdata/master-private.pem")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := parseEncryptedPKCS8("fuzz.pem", b)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.pem") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if e.iter > 4096 {
			return // in bounds, but too slow for 500 inputs
		}
		if _, err := ParseMasterPrivate("fuzz.pem", b, []byte("master pass")); err != nil && !strings.Contains(err.Error(), "fuzz.pem") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// TestMasterHostileIterations: a master key asking for 2^30 PBKDF2
// iterations is refused before any derivation.
func TestMasterHostileIterations(t *testing.T) {
	b, _ := pem.Decode(readTestdata(t, "master-private.pem"))
	var info encryptedPKInfo
	var p pbes2Params
	var kp pbkdf2Params
	if _, err := asn1.Unmarshal(b.Bytes, &info); err != nil {
		t.Fatal(err)
	}
	asn1.Unmarshal(info.Algo.Parameters.FullBytes, &p)
	asn1.Unmarshal(p.KDF.Parameters.FullBytes, &kp)
	kp.Iter = 1 << 30
	p.KDF.Parameters.FullBytes, _ = asn1.Marshal(kp)
	info.Algo.Parameters.FullBytes, _ = asn1.Marshal(p)
	der, _ := asn1.Marshal(info)
	data := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: der})
	start := time.Now()
	_, err := ParseMasterPrivate("big.pem", data, []byte("master pass"))
	if !errors.Is(err, ErrLimits) || !strings.Contains(err.Error(), "big.pem") || time.Since(start) > time.Second {
		t.Errorf("%v after %v, want ErrLimits naming big.pem at once", err, time.Since(start))
	}
}
