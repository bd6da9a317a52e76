package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// insertCached stores a chunk of n random bytes and reads its file once,
// so the page cache holds it.
func insertCached(t *testing.T, s *Store, n int, seed uint64) (chunk.Digest, []byte) {
	t.Helper()
	data := randBytes(n, seed)
	d := chunk.Sum(data)
	blob, _ := chunk.EncodeBlob(nil, data, false)
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(s.ChunkPath(d)); err != nil {
		t.Fatal(err)
	}
	return d, blob
}

// readBlob reads chunk d with ReadChunk, not mapped, and returns its bytes.
func readBlob(ctx context.Context, s *Store, d chunk.Digest, opt ChunkOptions) ([]byte, error) {
	b, err := s.ReadChunk(ctx, d, opt)
	return b.Bytes(), err
}

// A chunk file the page cache holds is mapped with MapCached; one it
// does not hold is read, and a missing one is ErrMissingChunk.
func TestReadChunkMapped(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	mapped := ChunkOptions{Map: MapCached}
	d, blob := insertCached(t, s, 1<<20+17, 31)
	b, err := s.ReadChunk(ctx, d, mapped)
	if err != nil || !bytes.Equal(b.Bytes(), blob) {
		t.Fatalf("cached: %d bytes back (%v)", len(b.Bytes()), err)
	}
	if !b.Mapped() {
		t.Log("the page cache does not report the file cached (cachestat needs Linux 6.5): read, not mapped")
	}
	b.Release()

	f, _ := os.Open(s.ChunkPath(d))
	unix.Fdatasync(int(f.Fd()))
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	f.Close()
	b, err = s.ReadChunk(ctx, d, mapped)
	if err != nil || !bytes.Equal(b.Bytes(), blob) || b.Mapped() {
		t.Fatalf("uncached: %d bytes back, mapped=%v (%v)", len(b.Bytes()), b.Mapped(), err)
	}

	var missing chunk.Digest
	if _, err := s.ReadChunk(ctx, missing, mapped); !errors.Is(err, ErrMissingChunk) {
		t.Fatalf("missing chunk: %v", err)
	}
}

// MapCompressed maps compressed blobs only: plain ones are copied
// anyway by its callers, and a read is cheaper than a mapping.
func TestReadChunkMapCompressed(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	opt := ChunkOptions{Map: MapCompressed}
	plainD, plainBlob := insertCached(t, s, 256<<10, 33)
	text := bytes.Repeat([]byte("compressible chunk data "), 20000)
	zD := chunk.Sum(text)
	zBlob, _ := chunk.EncodeBlob(nil, text, true)
	if k, _ := chunk.BlobKind(zBlob); k != chunk.KindZstd {
		t.Fatalf("test blob is %v, want zstd", k)
	}
	if _, err := s.InsertChunk(zD, zBlob); err != nil {
		t.Fatal(err)
	}
	os.ReadFile(s.ChunkPath(zD))
	b, err := s.ReadChunk(ctx, plainD, opt)
	if err != nil || !bytes.Equal(b.Bytes(), plainBlob) || b.Mapped() {
		t.Fatalf("plain: %d bytes, mapped=%v (%v)", len(b.Bytes()), b.Mapped(), err)
	}
	b, err = s.ReadChunk(ctx, zD, opt)
	if err != nil || !bytes.Equal(b.Bytes(), zBlob) {
		t.Fatalf("zstd: %d bytes (%v)", len(b.Bytes()), err)
	}
	if !b.Mapped() {
		t.Log("compressed chunk read, not mapped: cachestat needs Linux 6.5")
	}
	b.Release()
}

// mappedChunk stores a chunk of n random bytes, reads it with
// MapCached and returns it mapped (released at the test's end), or skips
// the test where the kernel cannot tell the file is cached.
func mappedChunk(t *testing.T, s *Store, n int, seed uint64) (chunk.Digest, Blob) {
	t.Helper()
	d, _ := insertCached(t, s, n, seed)
	b, err := s.ReadChunk(context.Background(), d, ChunkOptions{Map: MapCached})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Release)
	if !b.Mapped() {
		t.Skip("chunk file not mapped: cachestat needs Linux 6.5")
	}
	return d, b
}

// A mapped chunk file truncated under its reader gives ErrChunkFault
// from Do, not a crash; the goroutine's fault setting is restored.
func TestReadChunkMappedTruncated(t *testing.T) {
	s := testStore(t)
	d, b := mappedChunk(t, s, 256<<10, 32)
	if err := os.Truncate(s.ChunkPath(d), 0); err != nil {
		t.Fatal(err)
	}
	err := b.Do(func(blob []byte) error {
		chunk.Sum(blob)
		return nil
	})
	if !errors.Is(err, ErrChunkFault) {
		t.Fatalf("reading a truncated mapping: %v, want ErrChunkFault", err)
	}
	if debug.SetPanicOnFault(false) {
		t.Fatal("Do left the goroutine panicking on faults")
	}
}

// A panic in Do that is not a fault goes on.
func TestBlobDoOtherPanic(t *testing.T) {
	_, b := mappedChunk(t, testStore(t), 64<<10, 34)
	defer func() {
		if p := recover(); p != "not a fault" {
			t.Fatalf("recovered %v, want the panic to go on", p)
		}
	}()
	b.Do(func([]byte) error { panic("not a fault") })
}

// A chunk a killed GC left set aside under its hidden name is still read
// (until the next GC puts it back), in every read mode.
func TestReadChunkSetAside(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	d, blob := insertCached(t, s, 5000, 77)
	path := s.ChunkPath(d)
	aside := filepath.Join(filepath.Dir(path), AsideName(d.String()))
	if err := os.Rename(path, aside); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []ChunkOptions{{}, {Direct: DirectAlways}, {Direct: DirectNever, Map: MapCached}} {
		got, err := readBlob(ctx, s, d, opt)
		if err != nil || !bytes.Equal(got, blob) {
			t.Fatalf("%+v: %v", opt, err)
		}
	}
	os.Remove(aside)
	if _, err := readBlob(ctx, s, d, ChunkOptions{}); !errors.Is(err, ErrMissingChunk) {
		t.Fatalf("missing both ways: %v", err)
	}
}
