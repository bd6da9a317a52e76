package keyfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/crypt"
)

// hostileScrypt are scrypt parameters a crafted key file may carry, each
// beyond the memory (128·r·(n+p+2)) or the work (r·p·(n+2)) cairn
// computes, or invalid. The first three were inside the old bounds
// (n·r ≤ 2^21, n·r·p ≤ 2^23).
var hostileScrypt = []struct {
	name    string
	n, r, p uint64
}{
	{"huge r: 1 GiB, 34.5 s before", 2, 1 << 20, 4},
	{"huge p: 512 MiB, 39 s before", 2, 1, 1 << 22},
	{"PBS's n and r, p 16: 2^23 work", 65536, 8, 16},
	{"memory just over: n·r 2^21 (256 MiB + 3 KiB)", 1 << 18, 8, 1},
	{"memory just over through p", 1 << 20, 1, 1 << 20},
	{"work just over: 2^22 + 64", 1 << 17, 8, 4},
	{"huge n", 1 << 40, 1, 1},
	{"n 2^63", 1 << 63, 8, 1},
	{"r 2^32", 1024, 1 << 32, 1},
	{"p 2^32", 1024, 8, 1 << 32},
	{"all 2^32: products overflow 64 bits", 1 << 32, 1 << 32, 1 << 32},
	{"r·128 overflows", 2, 1 << 57, 1 << 7},
	{"max uint64", 1 << 63, 1<<64 - 1, 1<<64 - 1},
	{"n 0", 0, 8, 1},
	{"n 1", 1, 8, 1},
	{"n 3", 3, 8, 1},
	{"n 1023", 1023, 8, 1},
	{"r 0", 1024, 0, 1},
	{"p 0", 1024, 8, 0},
}

// allocated is the bytes f allocates (runtime.MemStats, process-wide: the
// test does not run in parallel with others).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestScryptHostile: every hostile parameter set in a key file is refused
// by Load before the passphrase is asked for and before scrypt runs
// (under 4 MiB allocated, where scrypt would take 128 MiB or more), with
// an error naming the file and the parameters; NewWithParams refuses them
// too.
func TestScryptHostile(t *testing.T) {
	key, err := crypt.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	defer key.Wipe()
	dir := t.TempDir()
	for _, c := range hostileScrypt {
		params := fmt.Sprintf(`"n":%d,"r":%d,"p":%d`, c.n, c.r, c.p)
		path := filepath.Join(dir, strings.NewReplacer(" ", "-", ":", "", ",", "", "·", "", "^", "").Replace(c.name)+".key")
		if err := os.WriteFile(path, mutate(t, "scrypt.key", `"n":1024,"r":8,"p":1`, params), 0o600); err != nil {
			t.Fatal(err)
		}
		asked := false
		pass := func() ([]byte, error) { asked = true; return []byte("correct horse"), nil }
		var lerr error
		n := allocated(func() { _, _, lerr = Load(path, pass) })
		want := fmt.Sprintf("n=%d r=%d p=%d", c.n, c.r, c.p)
		if !errors.Is(lerr, ErrLimits) || !strings.Contains(lerr.Error(), path) || !strings.Contains(lerr.Error(), want) {
			t.Errorf("%s: Load: %v, want ErrLimits naming %s and %s", c.name, lerr, path, want)
		}
		if asked {
			t.Errorf("%s: Load asked for the passphrase: the derivation was to run", c.name)
		}
		if n > 4<<20 {
			t.Errorf("%s: Load allocated %d bytes", c.name, n)
		}
		p := Params{KDF: Scrypt, N: c.n, R: c.r, P: c.p, Salt: []byte("salt")}
		n = allocated(func() { _, err = NewWithParams(key, p, []byte("correct horse"), time.Now()) })
		if !errors.Is(err, ErrLimits) || n > 4<<20 {
			t.Errorf("%s: NewWithParams: %v after %d bytes, want ErrLimits at once", c.name, err, n)
		}
	}
}

// TestScryptBounds: the parameters of every key file PBS writes, and the
// dearest the bounds take, are accepted; one past them is not.
func TestScryptBounds(t *testing.T) {
	for _, c := range []struct {
		n, r, p uint64
		ok      bool
	}{
		{65536, 8, 1, true},    // PBS: 64 MiB, 524304
		{1024, 8, 1, true},     // testdata/scrypt.key
		{1 << 17, 8, 3, true},  // 128 MiB, 3·2^20 + 48
		{1 << 17, 8, 4, false}, // 2^22 + 64
		{2, 1, 1 << 20, true},  // 2^22 exactly
		{2, 1, 1<<20 + 1, false},
		{1 << 18, 7, 1, true}, // 224 MiB
		{1 << 18, 8, 1, false},
		{1 << 20, 1, 1, true}, // 128 MiB + 384 bytes, 2^20 + 2
	} {
		if got := scryptWithin(c.n, c.r, c.p); got != c.ok {
			mem, work := scryptCost(c.n, c.r, c.p)
			t.Errorf("n=%d r=%d p=%d (%.0f bytes, %.0f work): within %v, want %v", c.n, c.r, c.p, mem, work, got, c.ok)
		}
	}
}

// TestScryptPBSKey: a key file with PBS's parameters (made by the
// independent Python implementation) opens.
func TestScryptPBSKey(t *testing.T) {
	e := loadExpected(t)
	k, c, err := Load("testdata/scrypt-pbs.key", passphrase(e.Passphrase))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Wipe()
	if c.Params.N != 65536 || c.Params.R != 8 || c.Params.P != 1 || k.Fingerprint().String() != e.Fingerprint {
		t.Errorf("params %+v, fingerprint %s", c.Params, k.Fingerprint())
	}
	want, _ := os.ReadFile("testdata/scrypt.key")
	got, _ := os.ReadFile("testdata/scrypt-pbs.key")
	if bytes.Equal(want, got) {
		t.Error("scrypt-pbs.key is scrypt.key")
	}
}
