package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

var (
	storeOnce sync.Once
	storeDir  string
	storeErr  error
)

// SharedStore returns a store made once with `cairn init` for all tests
// of this test process, on a tmpfs when there is one
// (storetest.FastTempDir): init makes 65,536 directories, and making and
// removing them on a loaded disk took 7.5 s and 4 s of system time and
// over a minute of waiting. Tests use groups of their own. A parallel
// test that runs a job (verify, gc, prune, tape export or restore, sync
// into it) uses a store of its own instead: a job holds the store's lock
// of its kind, and a second one in another test would be refused.
func SharedStore(t testing.TB) string {
	t.Helper()
	storeOnce.Do(func() {
		dir, err := os.MkdirTemp(storetest.FastTempDir(), "cairn-e2e-store-")
		if err != nil {
			storeErr = err
			return
		}
		storeDir = filepath.Join(dir, "store")
		r := Cairn(t, nil, "--store", storeDir, "init")
		if r.Code != 0 {
			storeErr = fmt.Errorf("init: %s", r.Stderr)
		}
	})
	if storeErr != nil {
		t.Fatal(storeErr)
	}
	return storeDir
}

func removeSharedStore() {
	if storeDir != "" {
		os.RemoveAll(filepath.Dir(storeDir))
	}
}

// TmpfsDir makes a directory removed when the test ends, on a tmpfs
// when there is one (storetest.FastTempDir): where a test makes a store
// of its own with `cairn init` (see SharedStore).
func TmpfsDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp(storetest.FastTempDir(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// OwnStore makes a store of the test's own in a TmpfsDir (prefix) and
// returns its path: as `cairn init` makes it, but the 65,536 chunk
// prefix directories are made on first use (LazyPrefixDirs). For tests
// of other commands than init: making those directories, walking and
// removing them cost about 3 CPU-s a store under -race.
func OwnStore(t *testing.T, prefix string) string {
	t.Helper()
	st := filepath.Join(TmpfsDir(t, prefix), "store")
	s, err := store.CreateWith(st, store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return st
}

// RandBytes returns n random bytes that are the same for the same seed.
var RandBytes = storetest.RandSeeded

// SparseImage writes an image with data, holes, written zeros and a
// repeated region; it returns the path and the expected bytes.
func SparseImage(t testing.TB, size int, seed uint64) (string, []byte) {
	t.Helper()
	img := make([]byte, size)
	path := filepath.Join(t.TempDir(), "disk.raw")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	write := func(off int, b []byte) {
		copy(img[off:], b)
		if _, err := f.WriteAt(b, int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	data := RandBytes(size/8, seed)
	write(0, data)                      // data
	write(size/2, data[:size/16])       // repeated data
	write(size/4, make([]byte, size/8)) // written zeros
	write(size-5000, RandBytes(5000, seed+1))
	return path, img
}
