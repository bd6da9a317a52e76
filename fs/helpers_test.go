package fs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/logtest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/storetest"
)

const testChunk = 64 << 10

// fixture is a store shared by the tests of this package (creating one
// takes seconds) and what its mount must show.
type fixture struct {
	s     *store.Store
	tmp   string
	files map[string][]byte // store path → content, for every file the mount shows
	links map[string]string // store path of each latest → target
	snaps map[string]store.Snapshot
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
	tmpRoot string
)

func TestMain(m *testing.M) {
	var err error
	tmpRoot, err = os.MkdirTemp(storetest.FastTempDir(), "cairn-fs-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

var groupSeq atomic.Int64

// newGroup returns a group of its own for a test that backs up, so that
// -count=N runs on the shared store do not collide.
func newGroup(id string) store.Group {
	return store.Group{Type: "vm", ID: fmt.Sprintf("%s-%d", id, groupSeq.Add(1))}
}

// needFUSE skips a test that needs a real mount when /dev/fuse is
// missing, unless CAIRN_TEST_REQUIRE_FUSE=1 makes that a failure.
func needFUSE(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("CAIRN_TEST_REQUIRE_FUSE") == "1" {
			t.Fatalf("FUSE required (CAIRN_TEST_REQUIRE_FUSE=1) but /dev/fuse is missing: %v", err)
		}
		t.Skipf("skipping real-mount test: /dev/fuse is missing (%v); set CAIRN_TEST_REQUIRE_FUSE=1 to fail instead", err)
	}
	if os.Geteuid() != 0 {
		if _, err := fusermount(); err != nil {
			if os.Getenv("CAIRN_TEST_REQUIRE_FUSE") == "1" {
				t.Fatalf("FUSE required but not root and no fusermount3")
			}
			t.Skip("skipping real-mount test: not root and no fusermount3")
		}
	}
}

func testFixture(t testing.TB) *fixture {
	t.Helper()
	fixOnce.Do(func() { fix, fixErr = buildFixture(filepath.Join(tmpRoot, "store")) })
	if fixErr != nil {
		t.Fatalf("fixture: %v", fixErr)
	}
	return fix
}

// randomData returns n pseudo-random bytes from seed, with zero runs
// where zeros says (offset, length pairs).
func randomData(seed uint64, n int, zeros ...int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 0xca, 0x1e})
	r.Read(b)
	for i := 0; i+1 < len(zeros); i += 2 {
		clear(b[zeros[i] : zeros[i]+zeros[i+1]])
	}
	return b
}

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// snapSpec is one backup of the fixture.
type snapSpec struct {
	g      store.Group
	at     time.Time
	images map[string][]byte
	blobs  map[string][]byte
	didx   map[string][]byte // single-index archives written as .didx (pxar)
	chunk  int               // image chunk size (default testChunk)
}

func buildFixture(dir string) (*fixture, error) {
	s, err := store.Create(dir)
	if err != nil {
		return nil, err
	}
	f := &fixture{s: s, tmp: filepath.Join(filepath.Dir(dir), "src"), files: map[string][]byte{},
		links: map[string]string{}, snaps: map[string]store.Snapshot{}}
	if err := os.MkdirAll(f.tmp, 0o755); err != nil {
		return nil, err
	}
	vm100 := store.Group{Type: "vm", ID: "100"}
	disk0 := randomData(1, 1<<20+12345, 256<<10, 256<<10)
	disk1 := bytes.Clone(disk0)
	copy(disk1[100<<10:], randomData(2, 200<<10))
	specs := []snapSpec{
		{g: vm100, at: t0, images: map[string][]byte{"disk.img": disk0},
			blobs: map[string][]byte{"qemu-server.conf.blob": []byte("name: vm100\nmemory: 2048\n")}},
		{g: vm100, at: t0.Add(time.Hour), images: map[string][]byte{"disk.img": disk1, "efi.img": randomData(3, 100<<10)}},
		{g: store.Group{NS: "prod", Type: "ct", ID: "200"}, at: t0, images: map[string][]byte{"root.img": randomData(4, 300<<10)}},
		{g: store.Group{NS: "prod/db", Type: "host", ID: "db1"}, at: t0.Add(2 * time.Hour),
			images: map[string][]byte{"data.img": randomData(5, 200<<10+7)},
			blobs:  map[string][]byte{"notes.blob": bytes.Repeat([]byte("cairn "), 5000)}},
		{g: store.Group{Type: "vm", ID: "101"}, at: t0, didx: map[string][]byte{"root.pxar.didx": treeFixture(),
			"catalog.pcat1.didx": []byte("not shown as a tree\n")}},
	}
	for _, sp := range specs {
		snap, err := f.backup(sp)
		if err != nil {
			return nil, err
		}
		f.snaps[snap.String()] = snap
	}
	// An unfinished snapshot, newer than the others: never shown.
	unfinished := store.Snapshot{Group: vm100, Time: t0.Add(3 * time.Hour)}
	if err := os.Mkdir(s.SnapshotPath(unfinished), 0o755); err != nil {
		return nil, err
	}
	return f, nil
}

// backup writes one snapshot and records what the mount must show.
func (f *fixture) backup(sp snapSpec) (store.Snapshot, error) {
	ctx := context.Background()
	b, err := f.s.StartBackup(ctx, sp.g, sp.at)
	if err != nil {
		return store.Snapshot{}, err
	}
	b.Sync = store.SyncNone
	snap := b.Snapshot()
	for name, data := range sp.images {
		if err := f.addImageChunk(ctx, b, name, data, sp.chunk); err != nil {
			b.Abort()
			return snap, err
		}
		f.files[snap.String()+"/"+name] = data
	}
	for name, data := range sp.blobs {
		blob, err := chunk.EncodeBlob(nil, data, true)
		if err == nil {
			err = b.AddBlob(name, blob)
		}
		if err != nil {
			b.Abort()
			return snap, err
		}
		f.files[snap.String()+"/"+name] = data
	}
	for name, data := range sp.didx {
		if err := addDynamic(f.s, b, name, data); err != nil {
			b.Abort()
			return snap, err
		}
		if name == "catalog.pcat1.didx" {
			f.files[snap.String()+"/catalog.pcat1"] = data
		}
	}
	if err := b.Finish(); err != nil {
		return snap, err
	}
	f.links[sp.g.String()+"/latest"] = snap.TimeString()
	return snap, nil
}

func (f *fixture) addImage(ctx context.Context, b *store.Backup, name string, data []byte) error {
	return f.addImageChunk(ctx, b, name, data, testChunk)
}

func (f *fixture) addImageChunk(ctx context.Context, b *store.Backup, name string, data []byte, cs int) error {
	if cs == 0 {
		cs = testChunk
	}
	src := filepath.Join(f.tmp, fmt.Sprintf("%d-%s", time.Now().UnixNano(), name))
	if err := os.WriteFile(src, data, 0o644); err != nil {
		return err
	}
	defer os.Remove(src)
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return b.AddImage(ctx, name, in, store.ImageOptions{ChunkSize: cs})
}

// splitArchiveStore makes a store with one snapshot of group host/id
// holding a split archive root.pxar made of meta and payload.
func splitArchiveStore(t *testing.T, id string, meta, payload []byte) (*store.Store, store.Snapshot) {
	t.Helper()
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.StartBackup(context.Background(), store.Group{Type: "host", ID: id}, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	for name, data := range map[string][]byte{"root.mpxar.didx": meta, "root.ppxar.didx": payload} {
		if err := addDynamic(s, b, name, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return s, b.Snapshot()
}

// addDynamic stores data as a dynamic index of uneven chunks.
func addDynamic(s *store.Store, b *store.Backup, name string, data []byte) error {
	w, err := index.NewDynamicWriter(filepath.Join(b.Dir(), name))
	if err != nil {
		return err
	}
	for off, n := 0, 1000; off < len(data); off, n = off+n, n*3 {
		part := data[off:min(off+n, len(data))]
		blob, err := chunk.EncodeBlob(nil, part, true)
		if err != nil {
			w.Abort()
			return err
		}
		d := chunk.Sum(part)
		if _, err := s.InsertChunk(d, blob); err != nil {
			w.Abort()
			return err
		}
		if err := w.Add(d, len(part)); err != nil {
			w.Abort()
			return err
		}
	}
	csum, size, err := w.Close()
	if err != nil {
		return err
	}
	return b.AddFile(store.FileInfo{Filename: name, Size: uint64(size), Csum: store.CsumHex(csum)})
}

// mountT mounts the fixture store on a fresh directory for one test and
// unmounts it when the test ends.
func mountT(t testing.TB, opt Options) (*Server, string, *logtest.Buffer) {
	t.Helper()
	needFUSE(t)
	f := testFixture(t)
	if opt.Store == nil {
		opt.Store = f.s
	}
	logs := &logtest.Buffer{}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.MultiWriter(logs, testWriter{t}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	mnt := t.TempDir()
	srv, err := Mount(context.Background(), mnt, opt)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
			// Never leave this process serving a mount it reads
			// itself: its exit would hang on its own open files.
			abortConn(srv.dev)
			<-srv.Done()
		}
		if _, ok := mountedAt(srv.Dir()); ok {
			t.Errorf("%s still mounted after Unmount", srv.Dir())
		}
	})
	return srv, srv.Dir(), logs
}

// testWriter sends log output to the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}

// forModes runs test in split mode (the default as root: a read-only
// mount without OPEN, and .jobs mounted on its own) and as one mount.
func forModes(t *testing.T, test func(t *testing.T, one bool)) {
	t.Run("split", func(t *testing.T) { test(t, false) })
	t.Run("one", func(t *testing.T) { test(t, true) })
}
