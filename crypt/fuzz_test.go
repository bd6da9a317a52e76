package crypt

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzOpen: arbitrary ciphertext, IV and tag never panic and never
// decrypt (only a tag made with the key verifies), and leave dst as it was.
func FuzzOpen(f *testing.F) {
	k, err := NewKey(bytes.Repeat([]byte{3}, KeySize))
	if err != nil {
		f.Fatal(err)
	}
	ct, iv, tag, _ := k.Seal(nil, []byte("hello cairn\n"))
	f.Add(ct, iv[:], tag[:])
	f.Add([]byte{}, make([]byte, IVSize), make([]byte, TagSize))
	f.Fuzz(func(t *testing.T, ct, ivb, tagb []byte) {
		var iv [IVSize]byte
		var tag [TagSize]byte
		copy(iv[:], ivb)
		copy(tag[:], tagb)
		dst := []byte("keep")
		out, err := k.Open(dst, ct, iv, tag)
		if err == nil {
			// Only the seed sealed above verifies.
			if string(out) != "keephello cairn\n" {
				t.Fatalf("forged ciphertext decrypted to %q", out)
			}
			return
		}
		if !errors.Is(err, ErrAuth) || string(out) != "keep" {
			t.Fatalf("got %q, %v", out, err)
		}
	})
}

// FuzzParseFingerprint: never a panic; what parses prints back the same
// bytes.
func FuzzParseFingerprint(f *testing.F) {
	f.Add("6f:10:a0:83:b8:9e:37:06:a0:b8:ce:ca:cc:12:0e:9f:40:6e:49:37:e8:60:0d:78:6d:42:0d:38:fb:67:de:7a")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		fp, err := ParseFingerprint(s)
		if err != nil {
			if !errors.Is(err, ErrFingerprint) {
				t.Fatalf("error %v", err)
			}
			return
		}
		again, err := ParseFingerprint(fp.String())
		if err != nil || again != fp {
			t.Fatalf("%q: round trip %v", s, err)
		}
	})
}
