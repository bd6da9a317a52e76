package store

import (
	"bytes"
	"context"
	"errors"
	"os"
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

func TestLoadChunkMapped(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	d, blob := insertCached(t, s, 1<<20+17, 31)
	got, release, err := s.LoadChunkMapped(ctx, d, nil)
	if err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("cached: %d bytes back (%v)", len(got), err)
	}
	if release == nil {
		t.Log("the page cache does not report the file cached (cachestat needs Linux 6.5): read, not mapped")
	} else {
		release()
	}

	f, _ := os.Open(s.ChunkPath(d))
	unix.Fdatasync(int(f.Fd()))
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	f.Close()
	got, release, err = s.LoadChunkMapped(ctx, d, nil)
	if err != nil || !bytes.Equal(got, blob) || release != nil {
		t.Fatalf("uncached: %d bytes back, mapped=%v (%v)", len(got), release != nil, err)
	}

	var missing chunk.Digest
	if _, _, err := s.LoadChunkMapped(ctx, missing, nil); !errors.Is(err, ErrMissingChunk) {
		t.Fatalf("missing chunk: %v", err)
	}
}

// LoadChunkMappedCompressed maps compressed blobs only: plain ones are
// copied anyway by its callers, and a read is cheaper than a mapping.
func TestLoadChunkMappedCompressed(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
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
	got, release, err := s.LoadChunkMappedCompressed(ctx, plainD, nil)
	if err != nil || !bytes.Equal(got, plainBlob) || release != nil {
		t.Fatalf("plain: %d bytes, mapped=%v (%v)", len(got), release != nil, err)
	}
	got, release, err = s.LoadChunkMappedCompressed(ctx, zD, nil)
	if err != nil || !bytes.Equal(got, zBlob) {
		t.Fatalf("zstd: %d bytes (%v)", len(got), err)
	}
	if release != nil {
		release()
	} else {
		t.Log("compressed chunk read, not mapped: cachestat needs Linux 6.5")
	}
}

// A mapped chunk file truncated under its reader gives ErrChunkFault, not
// a crash.
func TestLoadChunkMappedTruncated(t *testing.T) {
	s := testStore(t)
	d, _ := insertCached(t, s, 256<<10, 32)
	blob, release, err := s.LoadChunkMapped(context.Background(), d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if release == nil {
		t.Skip("chunk file not mapped: cachestat needs Linux 6.5")
	}
	defer release()
	if err := os.Truncate(s.ChunkPath(d), 0); err != nil {
		t.Fatal(err)
	}
	err = func() (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer RecoverFault(d, &err)
		chunk.Sum(blob)
		return nil
	}()
	if !errors.Is(err, ErrChunkFault) {
		t.Fatalf("reading a truncated mapping: %v, want ErrChunkFault", err)
	}
}
