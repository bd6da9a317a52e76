package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// testStore returns a new store for one test. It skips creating the
// 65,536 prefix directories, which takes seconds on some disks
// (TestCreateFull covers that).
func testStore(t testing.TB) *Store {
	t.Helper()
	s, err := CreateWith(filepath.Join(t.TempDir(), "store"), CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// randBytes is n reproducible random bytes, filled in one call (a byte
// at a time cost seconds under -race for the larger images).
func randBytes(n int, seed uint64) []byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	b := make([]byte, n)
	rand.NewChaCha8(s).Read(b)
	return b
}

func TestCreateOpenErrors(t *testing.T) {
	s := testStore(t)
	if _, err := Create(s.Root()); !errors.Is(err, ErrExists) {
		t.Errorf("create over a store: %v", err)
	}
	empty := t.TempDir()
	if _, err := Open(empty); !errors.Is(err, ErrNotStore) {
		t.Errorf("open empty dir: %v", err)
	}
	if _, err := Open(filepath.Join(empty, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open missing: %v", err)
	}
	file := filepath.Join(empty, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(file); err == nil {
		t.Error("open a file: no error")
	}
}

func TestInsertConcurrent(t *testing.T) {
	s := testStore(t)
	data := randBytes(100_000, 1)
	d := chunk.Sum(data)
	blob, _ := chunk.EncodeBlob(nil, data, true)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.InsertChunk(d, blob); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got, err := readBlob(context.Background(), s, d, ChunkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := chunk.DecodeChunk(nil, got, d, len(data)); err != nil || len(out) != len(data) {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Dir(s.ChunkPath(d)))
	for _, e := range ents {
		if e.Name() != d.String() && filepath.Ext(e.Name()) != ".bad" && len(e.Name()) != 64 {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	existed, err := s.InsertChunk(d, blob)
	if err != nil || !existed {
		t.Errorf("second insert: existed %v err %v", existed, err)
	}
}

func TestChunkStatTouchBadWalk(t *testing.T) {
	s := testStore(t)
	data := randBytes(5000, 2)
	d := chunk.Sum(data)
	blob, _ := chunk.EncodeBlob(nil, data, true)
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	info, err := s.StatChunk(d)
	if err != nil || info.Inode == 0 || info.Size != int64(len(blob)) {
		t.Fatalf("stat: %+v %v", info, err)
	}
	if err := s.TouchChunk(d); err != nil {
		t.Fatal(err)
	}
	found := false
	s.WalkChunks(context.Background(), func(x chunk.Digest) error {
		found = found || x == d
		return nil
	})
	if !found {
		t.Fatal("walk did not find the chunk")
	}
	for n := 0; n < 2; n++ {
		bad, err := s.MarkBad(d)
		if err != nil || filepath.Base(bad) != d.String()+"."+string(rune('0'+n))+".bad" {
			t.Fatalf("mark bad %d: %s %v", n, bad, err)
		}
		if _, err := readBlob(context.Background(), s, d, ChunkOptions{}); !errors.Is(err, ErrMissingChunk) {
			t.Fatalf("load after mark bad: %v", err)
		}
		s.InsertChunk(d, blob)
	}
	if _, err := s.StatChunk(chunk.Sum([]byte("nope"))); !errors.Is(err, ErrMissingChunk) {
		t.Fatalf("stat missing: %v", err)
	}
}

func TestParseRef(t *testing.T) {
	cases := []struct {
		in     string
		want   string
		latest bool
		bad    bool
	}{
		{"vm/100/2024-01-02T03:04:05Z", "vm/100/2024-01-02T03:04:05Z", false, false},
		{"ns/prod/ns/db/ct/web-1/2024-01-02T03:04:05Z", "ns/prod/ns/db/ct/web-1/2024-01-02T03:04:05Z", false, false},
		{"host/h1", "host/h1", true, false},
		{"host/h1/latest", "host/h1", true, false},
		{"disk/100/2024-01-02T03:04:05Z", "", false, true},
		{"vm/../2024-01-02T03:04:05Z", "", false, true},
		{"vm/100/yesterday", "", false, true},
		{"vm", "", false, true},
		{"vm/100/2024-01-02T03:04:05Z/x", "", false, true},
	}
	for _, tc := range cases {
		r, err := ParseRef(tc.in)
		if tc.bad {
			if err == nil || !errors.Is(err, ErrBadName) {
				t.Errorf("%q: want ErrBadName, got %v", tc.in, err)
			}
			continue
		}
		got := r.Group.String()
		if !r.Latest {
			got = r.Snapshot.String()
		}
		if err != nil || got != tc.want || r.Latest != tc.latest {
			t.Errorf("%q: got %q latest %v err %v", tc.in, got, r.Latest, err)
		}
	}
}

// TestCreateFull makes a real store with all its prefix directories.
func TestCreateFull(t *testing.T) {
	if testing.Short() {
		t.Skip("creating 65,536 directories is slow on some disks")
	}
	s, err := Create(filepath.Join(ramDir(t), "full")) // a tmpfs: on a loaded disk this took minutes
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := os.ReadDir(filepath.Join(s.Root(), chunkDir)); len(n) != prefixDir {
		t.Errorf("%d prefix dirs, want %d", len(n), prefixDir)
	}
	for _, name := range []string{"0000", "abcd", "ffff"} {
		if fi, err := os.Stat(filepath.Join(s.Root(), chunkDir, name)); err != nil || !fi.IsDir() {
			t.Errorf("prefix dir %s: %v", name, err)
		}
	}
}

// TestReadChunkCachedAndDirect reads chunks of odd and aligned sizes once
// with their files out of the page cache (read with O_DIRECT where the
// file system allows) and once with them in it: the same bytes either
// way.
func TestReadChunkCachedAndDirect(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	var blobs [][]byte
	var digests []chunk.Digest
	for i, n := range []int{1, 4095, 4096, 1 << 20, 1<<20 + 17} {
		data := randBytes(n, uint64(10+i))
		d := chunk.Sum(data)
		blob, _ := chunk.EncodeBlob(nil, data, false)
		if _, err := s.InsertChunk(d, blob); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(s.ChunkPath(d))
		if err != nil {
			t.Fatal(err)
		}
		unix.Fdatasync(int(f.Fd()))
		unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		cold := pageCached(f, int64(len(blob)))
		got, err := readBlob(ctx, s, d, ChunkOptions{})
		if err != nil || !bytes.Equal(got, blob) {
			t.Fatalf("%d bytes, page cache dropped (cached=%v): %d bytes back (%v)", n, cold, len(got), err)
		}
		os.ReadFile(s.ChunkPath(d)) // now in the page cache
		if !pageCached(f, int64(len(blob))) {
			t.Logf("%d bytes: cachestat does not see the file cached (kernel before 6.5?)", n)
		}
		f.Close()
		if got, err := readBlob(ctx, s, d, ChunkOptions{}); err != nil || !bytes.Equal(got, blob) {
			t.Fatalf("%d bytes, cached: %d bytes back (%v)", n, len(got), err)
		}
		blobs = append(blobs, blob)
		digests = append(digests, d)
	}
	// one buffer passed back and forth, files in and out of the page cache
	var buf []byte
	for round := range 2 {
		for i, d := range digests {
			if round == 0 {
				f, _ := os.Open(s.ChunkPath(d))
				unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
				f.Close()
			}
			got, err := readBlob(ctx, s, d, ChunkOptions{Buf: buf})
			if err != nil || !bytes.Equal(got, blobs[i]) {
				t.Fatalf("round %d, chunk %d into a reused buffer: %d bytes (%v)", round, i, len(got), err)
			}
			buf = got
		}
	}
}
