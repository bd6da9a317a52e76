package keyfile

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type expected struct {
	Key          string           `json:"key"`
	Passphrase   string           `json:"passphrase"`
	Fingerprint  string           `json:"fingerprint"`
	CreatedUnix  int64            `json:"created_unix"`
	ModifiedUnix map[string]int64 `json:"modified_unix"`
}

// raceEnabled is set by race_test.go under -race.
var raceEnabled bool

var vectors = []string{"scrypt.key", "scrypt-pbs.key", "pbkdf2.key", "none.key"}

func loadExpected(t *testing.T) expected {
	t.Helper()
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func passphrase(s string) Passphrase {
	return func() ([]byte, error) { return []byte(s), nil }
}

// TestVectorsUnwrap recovers the raw key of the Python-made key files with
// this package's kdf and AES-GCM alone, and re-encodes each file byte for
// byte.
func TestVectorsUnwrap(t *testing.T) {
	e := loadExpected(t)
	want, _ := hex.DecodeString(e.Key)
	for _, name := range vectors {
		path := filepath.Join("testdata", name)
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(path, file)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw := c.Data
		if c.Params.KDF != None {
			wkey, err := c.Params.derive([]byte(e.Passphrase))
			if err != nil {
				t.Fatal(err)
			}
			if raw, err = unwrap(wkey, c.Data); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if !bytes.Equal(raw, want) {
			t.Errorf("%s: key %x, want %x", name, raw, want)
		}
		if c.Fingerprint == nil || c.Fingerprint.String() != e.Fingerprint {
			t.Errorf("%s: fingerprint %v, want %s", name, c.Fingerprint, e.Fingerprint)
		}
		if c.Created.Unix() != e.CreatedUnix || c.Modified.Unix() != e.ModifiedUnix[name] {
			t.Errorf("%s: created %v modified %v", name, c.Created, c.Modified)
		}
		out, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, file) {
			t.Errorf("%s: re-encoded\n%s\nwant\n%s", name, out, file)
		}
	}
}

// TestVectorsLoad loads the Python-made key files into crypt.Keys.
func TestVectorsLoad(t *testing.T) {
	e := loadExpected(t)
	for _, name := range vectors {
		path := filepath.Join("testdata", name)
		k, c, err := Load(path, passphrase(e.Passphrase))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := hex.EncodeToString(k.Export()); got != e.Key {
			t.Errorf("%s: key %s, want %s", name, got, e.Key)
		}
		if got := k.Fingerprint().String(); got != e.Fingerprint {
			t.Errorf("%s: key fingerprint %s, want %s", name, got, e.Fingerprint)
		}
		if c.Params.KDF == "" {
			t.Errorf("%s: no kdf", name)
		}
		k.Wipe()
	}
}

func TestWrongPassphrase(t *testing.T) {
	for _, name := range []string{"scrypt.key", "pbkdf2.key"} {
		path := filepath.Join("testdata", name)
		_, _, err := Load(path, passphrase("battery staple"))
		if !errors.Is(err, ErrPassphrase) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want ErrPassphrase naming the file", name, err)
		}
		if name == "pbkdf2.key" && !strings.Contains(err.Error(), "a horse") {
			t.Errorf("%s: %v does not give the hint", name, err)
		}
		if _, _, err := Load(path, nil); !errors.Is(err, ErrPassphrase) {
			t.Errorf("%s: no passphrase callback: %v", name, err)
		}
		_, _, err = Load(path, passphrase("abc"))
		if !errors.Is(err, ErrShortPassphrase) {
			t.Errorf("%s: short passphrase: %v", name, err)
		}
	}
}

// mutate returns testdata/name with old replaced by new (which must occur).
func mutate(t *testing.T, name, old, new string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q", name, old)
	}
	return bytes.Replace(b, []byte(old), []byte(new), 1)
}

func TestHostile(t *testing.T) {
	scrypt, _ := os.ReadFile("testdata/scrypt.key")
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"truncated", scrypt[:len(scrypt)/2], ErrFormat},
		{"empty", nil, ErrFormat},
		{"not an object", []byte(`[1,2]`), ErrFormat},
		{"unknown kdf", mutate(t, "scrypt.key", `"Scrypt"`, `"Argon2"`), ErrKDF},
		{"lowercase kdf", mutate(t, "scrypt.key", `"Scrypt"`, `"scrypt"`), ErrKDF},
		{"two kdfs", mutate(t, "pbkdf2.key", `{"PBKDF2"`, `{"Scrypt":{},"PBKDF2"`), ErrFormat},
		{"kdf string", mutate(t, "none.key", `"kdf":null`, `"kdf":"Scrypt"`), ErrFormat},
		{"no kdf field", mutate(t, "none.key", `"kdf":null,`, ``), ErrFormat},
		{"scrypt n 2^40", mutate(t, "scrypt.key", `"n":1024`, `"n":1099511627776`), ErrLimits},
		{"scrypt n 2^63", mutate(t, "scrypt.key", `"n":1024`, `"n":9223372036854775808`), ErrLimits},
		{"scrypt n odd", mutate(t, "scrypt.key", `"n":1024`, `"n":1023`), ErrLimits},
		{"scrypt r 0", mutate(t, "scrypt.key", `"r":8`, `"r":0`), ErrLimits},
		{"scrypt r huge", mutate(t, "scrypt.key", `"r":8`, `"r":4294967296`), ErrLimits},
		{"scrypt p huge", mutate(t, "scrypt.key", `"p":1`, `"p":1048576`), ErrLimits},
		{"scrypt n negative", mutate(t, "scrypt.key", `"n":1024`, `"n":-1024`), ErrFormat},
		{"scrypt extra field", mutate(t, "scrypt.key", `"n":1024`, `"n":1024,"m":1`), ErrFormat},
		{"pbkdf2 iter 2^40", mutate(t, "pbkdf2.key", `"iter":1000`, `"iter":1099511627776`), ErrLimits},
		{"pbkdf2 iter 0", mutate(t, "pbkdf2.key", `"iter":1000`, `"iter":0`), ErrLimits},
		{"bad salt", mutate(t, "pbkdf2.key", `"salt":"AQ`, `"salt":"*Q`), ErrFormat},
		{"bad data base64", mutate(t, "none.key", `"data":"QE`, `"data":"!E`), ErrFormat},
		{"short data", mutate(t, "scrypt.key", `"data":"oKGio6SlpqeoqaqrrK2urx`, `"data":"oKGio6Sl`), ErrFormat},
		{"bad created", mutate(t, "none.key", `"created":"2026-12-01T17:30:00Z"`, `"created":"yesterday"`), ErrFormat},
		{"bad fingerprint", mutate(t, "none.key", `"fingerprint":"3d:a3`, `"fingerprint":"3d:zz`), ErrFormat},
		{"short fingerprint", mutate(t, "none.key", `"fingerprint":"3d:a3:`, `"fingerprint":"`), ErrFormat},
		{"huge", bytes.Repeat([]byte(" "), maxFile+1), ErrFormat},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "hostile.key")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, _, err := Load(path, passphrase("correct horse"))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%v, want %v naming %s", err, tc.want, path)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestTampered: a flipped bit in the encrypted key's iv, tag or ciphertext
// fails the tag (no key comes back).
func TestTampered(t *testing.T) {
	b, _ := os.ReadFile("testdata/pbkdf2.key")
	c, err := Parse("pbkdf2.key", b)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 15, 16, 31, 32, 63} {
		d := *c
		d.Data = append([]byte(nil), c.Data...)
		d.Data[i] ^= 0x10
		k, err := d.Decrypt("pbkdf2.key", passphrase("correct horse"))
		if k != nil || !errors.Is(err, ErrPassphrase) {
			t.Errorf("bit flipped at %d: %v", i, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range vectors {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"kdf":{"Scrypt":{"n":1099511627776,"r":8,"p":1,"salt":""}},"created":"x","modified":"x","data":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("fuzz.key", b)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.key") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := c.Params.check(); err != nil {
			t.Fatalf("Parse accepted parameters check refuses: %v", err)
		}
		out, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse("fuzz.key", out); err != nil {
			t.Fatalf("re-encoded file does not parse: %v\n%s", err, out)
		}
	})
}

// TestBoundsTime: the dearest parameters the bounds allow (the most work,
// the most memory) finish in seconds.
func TestBoundsTime(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("derives at the bounds (timing; not with -short or -race)")
	}
	for _, p := range []Params{
		{KDF: Scrypt, N: 2, R: 1, P: 1 << 20, Salt: []byte("s")}, // work 2^22, 128 MiB
		{KDF: Scrypt, N: 1 << 17, R: 8, P: 3, Salt: []byte("s")}, // work 3·2^20, 128 MiB
		{KDF: Scrypt, N: 1 << 18, R: 7, P: 1, Salt: []byte("s")}, // 224 MiB
		{KDF: PBKDF2, Iter: MaxPBKDF2Iter, Salt: []byte("s")},
	} {
		start := time.Now()
		if _, err := p.derive([]byte("passphrase")); err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s at the bounds took %v", p.KDF, d)
		}
		t.Logf("%s %d/%d/%d/%d at the bounds: %v", p.KDF, p.N, p.R, p.P, p.Iter, time.Since(start))
	}
}
