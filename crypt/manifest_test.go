package crypt

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

type manifestVectors struct {
	Key       string
	Manifests []struct{ JSON, Canonical, Signature string }
}

// TestManifestVectors: canonical JSON and signatures from
// testdata/gen_manifest_vectors.py, whose first manifest reproduces PBS's
// own test_manifest_signature (the script asserts PBS's expected value).
func TestManifestVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/manifest-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v manifestVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	k, err := NewKey(unhex(t, v.Key))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Wipe()
	if len(v.Manifests) == 0 || v.Manifests[0].Signature != "d7b446fb7db081662081d4b40fedd858a1d6307a5aff4ecff7d5bf4fd35679e9" {
		t.Fatal("the vectors lost PBS's own manifest signature")
	}
	for i, m := range v.Manifests {
		sig, err := k.ManifestSignature([]byte(m.JSON))
		if err != nil || hex.EncodeToString(sig[:]) != m.Signature {
			t.Errorf("manifest %d: signature %x, %v, want %s", i, sig, err, m.Signature)
		}
		var obj map[string]json.RawMessage
		_ = json.Unmarshal([]byte(m.JSON), &obj)
		delete(obj, "unprotected")
		delete(obj, "signature")
		stripped, _ := json.Marshal(obj)
		if c, err := CanonicalJSON(stripped); err != nil || string(c) != m.Canonical {
			t.Errorf("manifest %d: canonical\n%s, %v\nwant\n%s", i, c, err, m.Canonical)
		}
		// Signed as PBS writes it: the signature and the key's fingerprint.
		signed := strings.Replace(m.JSON, "{", `{"signature":"`+m.Signature+`",`, 1)
		signed = strings.Replace(signed, `"unprotected": {`, `"unprotected": {"key-fingerprint":"`+k.Fingerprint().String()+`",`, 1)
		if i == 0 {
			if err := k.VerifyManifest([]byte(signed)); err != nil {
				t.Errorf("manifest %d: verify: %v", i, err)
			}
			tampered := strings.Replace(signed, `"size": 200`, `"size": 201`, 1)
			if err := k.VerifyManifest([]byte(tampered)); !errors.Is(err, ErrSignature) {
				t.Errorf("tampered manifest: %v", err)
			}
			other, _ := GenerateKey()
			if err := other.VerifyManifest([]byte(signed)); !errors.Is(err, ErrWrongKey) {
				t.Errorf("other key: %v", err)
			}
			other.Wipe()
			if err := k.VerifyManifest([]byte(m.JSON)); !errors.Is(err, ErrUnsigned) {
				t.Errorf("unsigned: %v", err)
			}
			// The unprotected part may change without breaking it.
			notes := strings.Replace(signed, `"note": "`, `"note": "changed `, 1)
			if err := k.VerifyManifest([]byte(notes)); err != nil {
				t.Errorf("changed unprotected note: %v", err)
			}
		}
	}
}

func TestCanonicalJSONErrors(t *testing.T) {
	for _, doc := range []string{`null`, `{"a":null}`, `{"a":1.5}`, `{"a":1e3}`, `{"a":-0}`, `{"a":99999999999999999999}`,
		`{`, `{} {}`, "\"\xff\"", strings.Repeat("[", 100) + strings.Repeat("]", 100)} {
		if _, err := CanonicalJSON([]byte(doc)); !errors.Is(err, ErrCanonical) {
			t.Errorf("%.30q: %v", doc, err)
		}
	}
	c, err := CanonicalJSON([]byte(` { "b" : [ 1 , -2 , 18446744073709551615 ] , "a" : "\u00e9\u2028/" } `))
	if err != nil || string(c) != "{\"a\":\"\u00e9\u2028/\",\"b\":[1,-2,18446744073709551615]}" {
		t.Fatalf("got %s, %v", c, err)
	}
}

func FuzzCanonicalJSON(f *testing.F) {
	f.Add([]byte(`{"b":[1,"x\n"],"a":{"c":true}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := CanonicalJSON(doc)
		if err != nil {
			if !errors.Is(err, ErrCanonical) {
				t.Fatalf("error %v", err)
			}
			return
		}
		again, err := CanonicalJSON(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("canonical form is not stable: %s -> %s, %v", c, again, err)
		}
	})
}
