package verify

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
)

// TestReadChunkFile reads chunk files of awkward sizes with and without
// O_DIRECT, on a disk (t.TempDir) and on the shared test store (tmpfs,
// where O_DIRECT may be refused and buffered reads take over).
func TestReadChunkFile(t *testing.T) {
	readChunkFile := func(ctx context.Context, s *store.Store, d chunk.Digest, buf []byte, direct bool) ([]byte, error) {
		opt := store.ChunkOptions{Buf: buf, Direct: store.DirectNever}
		if direct {
			opt.Direct = store.DirectAlways
		}
		b, err := s.ReadChunk(ctx, d, opt)
		return b.Bytes(), err
	}
	dir := t.TempDir()
	var digests []chunk.Digest
	for i := range 200 {
		digests = append(digests, chunk.Sum([]byte{byte(i)}))
	}
	for _, d := range digests {
		os.MkdirAll(filepath.Join(dir, ".chunks", d.String()[:4]), 0o755)
	}
	disk, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*store.Store{disk, testStore(t)} {
		for i, size := range []int{0, 1, 4095, 4096, 4097, 3 * 4096, 1<<20 + 3} {
			d := digests[i]
			path := s.ChunkPath(d)
			os.MkdirAll(filepath.Dir(path), 0o755)
			want := randBytes(path, size)
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, direct := range []bool{false, true} {
				var buf []byte
				for range 2 { // a fresh buffer, then the one returned
					buf, err = readChunkFile(t.Context(), s, d, buf, direct)
					if err != nil || !bytes.Equal(buf, want) {
						t.Fatalf("%s size %d direct %v: %d bytes, %v", s.Root(), size, direct, len(buf), err)
					}
				}
			}
			os.Remove(path)
		}
		_, err := readChunkFile(t.Context(), s, digests[len(digests)-1], nil, true)
		if !errors.Is(err, store.ErrMissingChunk) {
			t.Errorf("missing chunk: %v", err)
		}
	}
}
