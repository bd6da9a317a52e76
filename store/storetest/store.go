package storetest

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

// NewStore creates a store in a directory of the test's own, closed when
// the test ends. It skips creating the 65,536 chunk prefix directories
// up front (the store makes each on first use), which takes seconds on
// some disks.
func NewStore(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// RandBytes returns n random bytes that are the same for the same name
// in every run.
func RandBytes(name string, n int) []byte {
	h := fnv.New64a()
	h.Write([]byte(name))
	var seed [32]byte
	copy(seed[:], h.Sum(nil))
	b := make([]byte, n)
	rand.NewChaCha8(seed).Read(b)
	return b
}

// Image describes an image snapshot for BackupImage.
type Image struct {
	Data      []byte
	ChunkSize int               // fixed chunk size; 0: the store default
	Blobs     map[string][]byte // NAME.blob files, encoded blobs, added beside disk.img
	Key       *crypt.Key        // encrypts the backup (store.Backup.Encrypt); nil: plain
}

// BackupImage writes a finished snapshot of g at time at holding img.Data
// as disk.img, read from a real file, and returns it. It skips the
// flushes to disk (store.SyncNone): tests do not survive power loss.
func BackupImage(t testing.TB, s *store.Store, g store.Group, at time.Time, img Image) store.Snapshot {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(path, img.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := s.StartBackup(ctx, g, at)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	if img.Key != nil {
		if err := b.Encrypt(img.Key); err != nil {
			b.Abort()
			t.Fatal(err)
		}
	}
	if err := b.AddImage(ctx, "disk.img", f, store.ImageOptions{ChunkSize: img.ChunkSize, Workers: 1}); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(img.Blobs)) {
		if err := b.AddBlob(name, img.Blobs[name]); err != nil {
			b.Abort()
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return b.Snapshot()
}

// FastTempDir is where a test that shares one full store among its
// tests (made once, in TestMain) should make it: /dev/shm when it is a
// writable directory, since a store's 65,536 chunk directories take
// seconds to create and remove on a loaded disk; else "" (os.TempDir).
func FastTempDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return ""
}

// RandSeeded returns n random bytes that are the same for the same seed
// in every run.
func RandSeeded(n int, seed uint64) []byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	b := make([]byte, n)
	rand.NewChaCha8(s).Read(b)
	return b
}
