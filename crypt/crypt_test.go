package crypt

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

type vectors struct {
	Keys []struct {
		EncKey           string `json:"enc_key"`
		IDKey            string `json:"id_key"`
		Fingerprint      string `json:"fingerprint"`
		FingerprintShort string `json:"fingerprint_short"`
		Digests          []struct{ Data, Digest string }
		AuthTags         []struct{ Data, Tag string } `json:"auth_tags"`
		GCM              []struct{ IV, Plain, Ciphertext, Tag string }
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Keys) == 0 {
		t.Fatal("no vectors")
	}
	return v
}

// TestVectors checks id_key, fingerprint, keyed digest, auth tag and
// AES-GCM against vectors made by testdata/gen_vectors.py (Python,
// hashlib and cryptography; see testdata/README.md).
func TestVectors(t *testing.T) {
	for i, kv := range loadVectors(t).Keys {
		k, err := NewKey(unhex(t, kv.EncKey))
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(k.id); got != kv.IDKey {
			t.Errorf("key %d: id_key %s, want %s", i, got, kv.IDKey)
		}
		if got := k.Fingerprint().String(); got != kv.Fingerprint {
			t.Errorf("key %d: fingerprint %s, want %s", i, got, kv.Fingerprint)
		}
		if got := k.Fingerprint().Short(); got != kv.FingerprintShort {
			t.Errorf("key %d: short fingerprint %s, want %s", i, got, kv.FingerprintShort)
		}
		if fp, err := ParseFingerprint(kv.Fingerprint); err != nil || fp != k.Fingerprint() {
			t.Errorf("key %d: ParseFingerprint: %v", i, err)
		}
		for _, d := range kv.Digests {
			if got := k.Digest(unhex(t, d.Data)); hex.EncodeToString(got[:]) != d.Digest {
				t.Errorf("key %d: digest of %.16s...: %x, want %s", i, d.Data, got, d.Digest)
			}
		}
		for _, a := range kv.AuthTags {
			if got := k.AuthTag(unhex(t, a.Data)); hex.EncodeToString(got[:]) != a.Tag {
				t.Errorf("key %d: auth tag of %.16s...: %x, want %s", i, a.Data, got, a.Tag)
			}
		}
		for _, g := range kv.GCM {
			iv, tag := [IVSize]byte(unhex(t, g.IV)), [TagSize]byte(unhex(t, g.Tag))
			plain, err := k.Open([]byte("prefix"), unhex(t, g.Ciphertext), iv, tag)
			if err != nil || !bytes.Equal(plain, append([]byte("prefix"), unhex(t, g.Plain)...)) {
				t.Errorf("key %d: Open of the Python ciphertext: %v", i, err)
			}
			ct := unhex(t, g.Ciphertext)
			if len(ct) > 0 {
				ct[len(ct)/2] ^= 1
				if _, err := k.Open(nil, ct, iv, tag); !errors.Is(err, ErrAuth) {
					t.Errorf("key %d: flipped ciphertext: %v", i, err)
				}
			}
		}
		k.Wipe()
	}
}

func TestSealOpen(t *testing.T) {
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	defer k.Wipe()
	other, _ := GenerateKey()
	defer other.Wipe()
	plain := bytes.Repeat([]byte("cairn secret "), 1000)
	ct, iv, tag, err := k.Seal([]byte("hdr"), plain)
	if err != nil {
		t.Fatal(err)
	}
	if len(ct) != 3+len(plain) || string(ct[:3]) != "hdr" || bytes.Contains(ct, []byte("cairn secret")) {
		t.Fatalf("sealed %d bytes, want %d, ciphertext", len(ct), 3+len(plain))
	}
	ct = ct[3:]
	got, err := k.Open(nil, ct, iv, tag)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open: %v", err)
	}
	_, iv2, _, _ := k.Seal(nil, plain)
	if iv2 == iv {
		t.Fatal("two seals used the same IV")
	}
	// Flip one bit of ciphertext, IV or tag, or use another key: ErrAuth,
	// dst returned unchanged and nothing decrypted in its spare room.
	cases := map[string]func() ([]byte, error){
		"wrong key": func() ([]byte, error) { return other.Open(make([]byte, 0, len(ct)+64), ct, iv, tag) },
	}
	for _, part := range []string{"ciphertext", "iv", "tag"} {
		for _, bit := range []int{0, 7, 100} {
			c, v, g := bytes.Clone(ct), iv, tag
			switch part {
			case "ciphertext":
				c[bit/8*37%len(c)] ^= 1 << (bit % 8)
			case "iv":
				v[bit/8%IVSize] ^= 1 << (bit % 8)
			case "tag":
				g[bit/8%TagSize] ^= 1 << (bit % 8)
			}
			cases[fmt.Sprint(part, bit)] = func() ([]byte, error) { return k.Open(make([]byte, 0, len(c)+64), c, v, g) }
		}
	}
	for name, open := range cases {
		out, err := open()
		if !errors.Is(err, ErrAuth) || len(out) != 0 {
			t.Errorf("%s: %d bytes, %v", name, len(out), err)
		}
		if spare := out[:cap(out)]; bytes.Contains(spare, []byte("cairn secret")) {
			t.Errorf("%s: plaintext left in the buffer", name)
		}
	}
}

func TestSealInPlace(t *testing.T) {
	k, _ := NewKey(bytes.Repeat([]byte{7}, KeySize))
	defer k.Wipe()
	buf := make([]byte, 44, 44+100+TagSize)
	buf = append(buf, bytes.Repeat([]byte("x"), 100)...)
	ct, iv, tag, err := k.Seal(buf[:44], buf[44:])
	if err != nil || len(ct) != 144 || &ct[0] != &buf[0] {
		t.Fatalf("in-place seal: %d bytes, %v", len(ct), err)
	}
	if got, err := k.Open(nil, ct[44:], iv, tag); err != nil || string(got) != strings.Repeat("x", 100) {
		t.Fatalf("open: %v", err)
	}
}

func TestBadKeys(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := NewKey(make([]byte, n)); !errors.Is(err, ErrKeySize) {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	for _, s := range []string{"", "zz", "6f:10", strings.Repeat("g", 64), strings.Repeat("ab", 33)} {
		if _, err := ParseFingerprint(s); !errors.Is(err, ErrFingerprint) {
			t.Errorf("fingerprint %q: %v", s, err)
		}
	}
}

func TestWipe(t *testing.T) {
	enc := bytes.Repeat([]byte{0xA5}, KeySize)
	k, err := NewKey(enc)
	if err != nil {
		t.Fatal(err)
	}
	mem := k.mem
	if exp := k.Export(); !bytes.Equal(exp, enc) {
		t.Fatal("export differs")
	}
	k.Wipe()
	if k.mapped || k.Export() != nil {
		t.Fatal("a wiped key still exports")
	}
	if !k.mapped && len(mem) > 0 && cap(mem) < 4096 && !bytes.Equal(mem, make([]byte, len(mem))) {
		t.Fatal("heap key memory not zeroed") // mapped memory is unmapped: reading it would fault
	}
	if _, _, _, err := k.Seal(nil, []byte("x")); !errors.Is(err, ErrNoKey) {
		t.Fatalf("seal with a wiped key: %v", err)
	}
	if _, err := k.Open(nil, []byte("x"), [IVSize]byte{}, [TagSize]byte{}); !errors.Is(err, ErrNoKey) {
		t.Fatalf("open with a wiped key: %v", err)
	}
	if k.Digest([]byte("x")) != [32]byte{} || k.AuthTag([]byte("x")) != [32]byte{} {
		t.Fatal("a wiped key still digests")
	}
	var nilKey *Key
	if _, _, _, err := nilKey.Seal(nil, nil); !errors.Is(err, ErrNoKey) {
		t.Fatalf("nil key: %v", err)
	}
	nilKey.Wipe()
}

// TestNoKeyInFormat: printing a Key any way shows no key bytes.
func TestNoKeyInFormat(t *testing.T) {
	enc := bytes.Repeat([]byte{0xA5}, KeySize)
	k, _ := NewKey(enc)
	defer k.Wipe()
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%d", "%q"} {
		for _, v := range []any{k, *k} {
			s := fmt.Sprintf(f, v)
			if strings.Contains(strings.ToLower(s), "a5a5") || strings.Contains(s, "165") || strings.Contains(s, `\xa5`) {
				t.Errorf("%s of %T shows key bytes: %s", f, v, s)
			}
		}
	}
}

func TestDigestKeyed(t *testing.T) {
	a, _ := NewKey(make([]byte, KeySize))
	b, _ := NewKey(bytes.Repeat([]byte{1}, KeySize))
	data := []byte("same data")
	if a.Digest(data) == b.Digest(data) || a.Fingerprint() == b.Fingerprint() {
		t.Fatal("two keys give the same digest or fingerprint")
	}
}
