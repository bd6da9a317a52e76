package verify

import (
	"context"
	"hash/crc32"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

// The tests share one store (creating one makes 65,536 directories);
// each test works in a namespace of its own with data of its own.
var (
	storeOnce   sync.Once
	sharedStore *store.Store
	storeErr    error
	tmpRoot     string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedStore != nil {
		sharedStore.Close()
	}
	if tmpRoot != "" {
		os.RemoveAll(tmpRoot)
	}
	os.Exit(code)
}

func testStore(t testing.TB) *store.Store {
	storeOnce.Do(func() {
		tmpRoot, storeErr = os.MkdirTemp(fastTempDir(), "cairn-jobs-test")
		if storeErr == nil {
			sharedStore, storeErr = store.Create(filepath.Join(tmpRoot, "store"))
		}
	})
	if storeErr != nil {
		t.Fatal(storeErr)
	}
	return sharedStore
}

// fastTempDir prefers a tmpfs: making and removing a store's 65,536
// directories there takes a fraction of the time it takes on a disk.
func fastTempDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return ""
}

const testChunk = 64 << 10

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// randBytes returns n reproducible random bytes for the name.
func randBytes(name string, n int) []byte {
	h := fnv.New64a()
	h.Write([]byte(name))
	var seed [32]byte
	copy(seed[:], h.Sum(nil))
	r := rand.NewChaCha8(seed)
	b := make([]byte, n)
	r.Read(b)
	return b
}

// compressible returns n reproducible bytes that zstd shrinks: eight
// random bytes in every 64.
func compressible(name string, n int) []byte {
	r := randBytes(name, n/8)
	b := make([]byte, n)
	for i := 0; i < n/64; i++ {
		copy(b[i*64:], r[i*8:i*8+8])
	}
	return b
}

// backupImage writes a snapshot of g at time at with data as disk.img in
// 64 KiB chunks.
func backupImage(t testing.TB, s *store.Store, g store.Group, at time.Time, data []byte) store.Snapshot {
	t.Helper()
	return backupImageAt(t, s, g, at, data, testChunk)
}

// backupImageSize is backupImage now with another chunk size.
func backupImageSize(t testing.TB, s *store.Store, g store.Group, data []byte, chunkSize int) store.Snapshot {
	t.Helper()
	return backupImageAt(t, s, g, time.Now(), data, chunkSize)
}

func backupImageAt(t testing.TB, s *store.Store, g store.Group, at time.Time, data []byte, chunkSize int) store.Snapshot {
	t.Helper()
	path := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := s.StartBackup(context.Background(), g, at)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	if err := b.AddImage(context.Background(), "disk.img", f, store.ImageOptions{ChunkSize: chunkSize, Workers: 1}); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return b.Snapshot()
}

// chunksOf lists the digests of a snapshot's index file.
func chunksOf(t testing.TB, s *store.Store, snap store.Snapshot, file string) []chunk.Digest {
	t.Helper()
	x, err := store.OpenIndex(filepath.Join(s.SnapshotPath(snap), file))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var out []chunk.Digest
	for i := 0; i < x.Len(); i++ {
		d, _, _ := x.Chunk(i)
		out = append(out, d)
	}
	return out
}

// newTestManager returns a manager with verify registered; auto chunk
// order reads an empty sysfs (so it falls back to index order).
func newTestManager(t testing.TB, s *store.Store, kinds ...jobs.Kind) *jobs.Manager {
	t.Helper()
	m := jobs.NewManager(context.Background(), s, nil)
	if len(kinds) == 0 {
		kinds = []jobs.Kind{VerifyKind{Sysfs: t.TempDir()}}
	}
	for _, k := range kinds {
		if err := m.Register(k); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(m.Close)
	return m
}

// runVerify runs a verify job to its end.
func runVerify(t testing.TB, s *store.Store, params map[string]string) (jobs.Status, VerifyReport, *jobs.Job) {
	t.Helper()
	m := newTestManager(t, s)
	j, err := m.Start("verify", params)
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Wait(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	rep, ok := st.Result.(VerifyReport)
	if !ok {
		t.Fatalf("result is %T", st.Result)
	}
	return st, rep, j
}

func verifyState(t testing.TB, s *store.Store, snap store.Snapshot) (store.VerifyState, bool) {
	t.Helper()
	m, err := s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	return m.VerifyState()
}

func resultOf(rep VerifyReport, snap store.Snapshot) (SnapshotResult, bool) {
	for _, r := range rep.Snapshots {
		if r.Snapshot == snap.String() {
			return r, true
		}
	}
	return SnapshotResult{}, false
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
