package hostile_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/store/index"
)

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// hostileStore returns a store holding a good snapshot and one snapshot
// per hostile index case, all listing the same chunks.
func hostileStore(t *testing.T) (*store.Store, store.Snapshot, []byte, map[string]store.Snapshot) {
	t.Helper()
	dir := t.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "cairn-hostile-")
		if err == nil {
			dir = d
			t.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	s, err := store.CreateWith(filepath.Join(dir, "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	c, err := hostile.PutChunks(s, "shared", 4, hostile.ChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	good, want, err := hostile.WriteGood(ctx, s, store.Group{Type: store.TypeVM, ID: "good"}, t0, c)
	if err != nil {
		t.Fatal(err)
	}
	snaps := map[string]store.Snapshot{}
	for _, ic := range hostile.IndexCases() {
		snap, err := hostile.WriteIndexCase(ctx, s, store.Group{Type: store.TypeVM, ID: ic.Name}, t0, ic, c)
		if err != nil {
			t.Fatal(err)
		}
		snaps[ic.Name] = snap
	}
	return s, good, want, snaps
}

// readAll reads an index's whole data three ways (ReadAt in pieces that
// cross chunks, Slice within chunks, WriteTo) through one cache, and
// returns the first error of each.
func readAll(ctx context.Context, x index.Index, c *chunkcache.Cache) (errs [3]error, got []byte) {
	r := chunkcache.NewReader(ctx, x, c, 2)
	buf := make([]byte, 40<<10)
	for off := int64(0); off < x.Size(); off += int64(len(buf)) {
		n, err := r.ReadAtContext(ctx, buf, off)
		if err != nil && !(errors.Is(err, io.EOF) && off+int64(n) == x.Size()) {
			errs[0] = err
			break
		}
		if n < len(buf) && off+int64(n) < x.Size() {
			errs[0] = errors.New("short read without an error")
			break
		}
		got = append(got, buf[:n]...)
	}
	for off := int64(0); off < x.Size(); off += 4096 {
		if _, _, err := r.Slice(ctx, off, int(min(4096, x.Size()-off))); err != nil {
			errs[1] = err
			break
		}
	}
	var w bytes.Buffer
	n, err := chunkcache.NewReader(ctx, x, c, 2).WriteTo(&w)
	if err == nil && n != x.Size() {
		err = errors.New("WriteTo wrote less than the index's size without an error")
	}
	errs[2] = err
	return errs, got
}

func TestHostileIndexes(t *testing.T) {
	s, good, want, snaps := hostileStore(t)
	ctx := t.Context()
	// One cache for all: a chunk cached by one index's entry is checked
	// against every other entry that asks for it.
	c, err := store.NewCache(s, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	readGood := func() {
		m, err := s.ReadManifest(good)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range []string{hostile.FixedFile, hostile.DynamicFile} {
			x, err := s.OpenSnapshotIndex(good, m, file)
			if err != nil {
				t.Fatal(err)
			}
			errs, got := readAll(ctx, x, c)
			x.Close()
			if errs != [3]error{} || !bytes.Equal(got, want) {
				t.Fatalf("good %s: %v, %d bytes of %d, equal %v", file, errs, len(got), len(want), bytes.Equal(got, want))
			}
		}
	}
	readGood()
	for _, ic := range hostile.IndexCases() {
		t.Run(ic.Name, func(t *testing.T) {
			snap := snaps[ic.Name]
			m, err := s.ReadManifest(snap)
			if err != nil {
				t.Fatal(err)
			}
			x, err := s.OpenSnapshotIndex(snap, m, ic.File)
			if ic.Stage == hostile.AtOpen {
				if err == nil {
					x.Close()
					t.Fatal("opened without an error")
				}
				if !errors.Is(err, index.ErrFormat) || !strings.Contains(err.Error(), ic.File) {
					t.Errorf("open: %v, want index.ErrFormat naming %s", err, ic.File)
				}
				return
			}
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer x.Close()
			var errs [3]error
			hostile.InTime(t, "read", func() { errs, _ = readAll(ctx, x, c) })
			for i, err := range errs {
				var cre *chunkcache.ReadError
				switch {
				case err == nil:
					t.Errorf("read %d: no error", i)
				case !errors.As(err, &cre) || !strings.Contains(err.Error(), ic.File):
					t.Errorf("read %d: %v, want a chunkcache.ReadError naming %s", i, err, ic.File)
				case !errors.Is(err, chunkcache.ErrSizeMismatch) && !store.IsChunkError(err):
					t.Errorf("read %d: %v, want ErrSizeMismatch or a chunk error", i, err)
				case errors.Is(err, chunkcache.ErrSizeMismatch) && !strings.Contains(err.Error(), "the index entry says"):
					t.Errorf("read %d: %v does not give both sizes", i, err)
				}
			}
		})
	}
	readGood() // the good snapshot reads as before, through the same cache
}

// TestIndexTruncatedWhileOpen cuts index files that are open (mapped)
// and reads them: an error naming the file, no SIGBUS.
func TestIndexTruncatedWhileOpen(t *testing.T) {
	s, good, _, _ := hostileStore(t)
	ctx := t.Context()
	m, err := s.ReadManifest(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{hostile.FixedFile, hostile.DynamicFile} {
		t.Run(file, func(t *testing.T) {
			x, err := s.OpenSnapshotIndex(good, m, file)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			c, err := store.NewCache(s, 64<<20)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			path := filepath.Join(s.SnapshotPath(good), file)
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			var errs [3]error
			hostile.InTime(t, "read", func() { errs, _ = readAll(ctx, x, c) })
			for i, err := range errs {
				if !errors.Is(err, index.ErrFault) || !strings.Contains(err.Error(), path) {
					t.Errorf("read %d: %v, want index.ErrFault naming %s", i, err, path)
				}
			}
			if !errors.Is(x.Err(), index.ErrFault) {
				t.Errorf("Err: %v", x.Err())
			}
			if cs, ok := x.(interface{ ComputeCsum() [32]byte }); ok {
				if sum := cs.ComputeCsum(); sum != ([32]byte{}) {
					t.Errorf("checksum of a truncated mapping: %x", sum)
				}
			}
			for i := 0; i < x.Len(); i++ {
				if _, start, end := x.Chunk(i); end != start {
					t.Errorf("entry %d of a truncated index: [%d, %d)", i, start, end)
				}
			}
		})
	}
}

// TestRandomDynamicIndexes reads random dynamic indexes of shared chunks,
// some giving chunks wrong sizes, through one cache: a good index reads
// back exactly, any wrong size fails every way of reading it with
// ErrSizeMismatch, and nothing hangs.
func TestRandomDynamicIndexes(t *testing.T) {
	s, _, _, _ := hostileStore(t)
	ctx := t.Context()
	c, err := hostile.PutChunks(s, "shared", 4, hostile.ChunkSize) // the chunks hostileStore stored
	if err != nil {
		t.Fatal(err)
	}
	cache, err := store.NewCache(s, 1<<20) // smaller than the data: hits and loads both
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	bad := 0
	for seed := range uint64(200) {
		ic := hostile.RandomDynamic(seed)
		snap, err := hostile.WriteIndexCase(ctx, s, store.Group{Type: store.TypeVM, ID: ic.Name}, t0, ic, c)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.ReadManifest(snap)
		if err != nil {
			t.Fatal(err)
		}
		x, err := s.OpenSnapshotIndex(snap, m, ic.File)
		if err != nil {
			t.Fatalf("%s: %v", ic.Name, err)
		}
		want, err := hostile.Content(x.Path(), c)
		if err != nil {
			t.Fatal(err)
		}
		var errs [3]error
		var got []byte
		hostile.InTime(t, ic.Name, func() { errs, got = readAll(ctx, x, cache) })
		x.Close()
		if ic.Stage == hostile.AtRead {
			bad++
			for i, err := range errs {
				if !errors.Is(err, chunkcache.ErrSizeMismatch) {
					t.Errorf("%s: read %d: %v, want ErrSizeMismatch", ic.Name, i, err)
				}
			}
		} else if errs != [3]error{} || !bytes.Equal(got, want) {
			t.Errorf("%s (good): %v, equal %v", ic.Name, errs, bytes.Equal(got, want))
		}
	}
	if bad < 50 || bad > 190 {
		t.Errorf("%d of 200 random indexes have a wrong size: the generator is off", bad)
	}
}

// TestFIFOs: a manifest or blob that is a FIFO is an error at once, not
// an open that waits for a writer.
func TestFIFOs(t *testing.T) {
	s, _, _, _ := hostileStore(t)
	ms, bs, err := hostile.WriteFIFOs(t.Context(), s, store.Group{Type: store.TypeCT, ID: "fifo-manifest"},
		store.Group{Type: store.TypeCT, ID: "fifo-blob"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	hostile.InTime(t, "manifest", func() { _, err = s.ReadManifest(ms) })
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("manifest: %v", err)
	}
	m, err := s.ReadManifest(bs)
	if err != nil {
		t.Fatal(err)
	}
	hostile.InTime(t, "blob", func() { _, err = s.ReadBlob(bs, m, hostile.BlobFile) })
	if err == nil || !strings.Contains(err.Error(), hostile.BlobFile) {
		t.Errorf("blob: %v", err)
	}
}
