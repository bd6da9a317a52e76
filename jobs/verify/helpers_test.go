package verify

import (
	"context"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/storetest"
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
		tmpRoot, storeErr = os.MkdirTemp(storetest.FastTempDir(), "cairn-jobs-test")
		if storeErr == nil {
			sharedStore, storeErr = store.Create(filepath.Join(tmpRoot, "store"))
		}
	})
	if storeErr != nil {
		t.Fatal(storeErr)
	}
	return sharedStore
}

const testChunk = 64 << 10

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// randBytes returns n reproducible random bytes for the name.
var randBytes = storetest.RandBytes

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
	return storetest.BackupImage(t, s, g, at, storetest.Image{Data: data, ChunkSize: chunkSize})
}

// chunksOf lists the digests of a snapshot's index file.
func chunksOf(t testing.TB, s *store.Store, snap store.Snapshot, file string) []chunk.Digest {
	t.Helper()
	x, err := index.Open(filepath.Join(s.SnapshotPath(snap), file))
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
		kinds = []jobs.Kind{Kind{Sysfs: t.TempDir()}}
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
func runVerify(t testing.TB, s *store.Store, params map[string]string) (jobs.Status, Report, *jobs.Job) {
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
	rep, ok := st.Result.(Report)
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

func resultOf(rep Report, snap store.Snapshot) (SnapshotResult, bool) {
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
