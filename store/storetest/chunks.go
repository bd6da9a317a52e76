package storetest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
)

// ChunksOf lists the digests of snap's index files, in order: the one
// named by files, or every .fidx and .didx of its manifest when none is.
func ChunksOf(t testing.TB, s *store.Store, snap store.Snapshot, files ...string) []chunk.Digest {
	t.Helper()
	if len(files) == 0 {
		m, err := s.ReadManifest(snap)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			if strings.HasSuffix(f.Filename, ".fidx") || strings.HasSuffix(f.Filename, ".didx") {
				files = append(files, f.Filename)
			}
		}
	}
	var out []chunk.Digest
	for _, file := range files {
		x, err := s.OpenIndexFile(snap, file)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < x.Len(); i++ {
			d, _, _ := x.Chunk(i)
			out = append(out, d)
		}
		x.Close()
	}
	return out
}

// AgeChunks sets the atime and mtime of chunks to age ago (whole
// seconds) and returns that time: as if nothing had touched them since.
func AgeChunks(t testing.TB, s *store.Store, chunks []chunk.Digest, age time.Duration) time.Time {
	t.Helper()
	old := time.Now().Add(-age).Truncate(time.Second)
	for _, d := range chunks {
		if err := os.Chtimes(s.ChunkPath(d), old, old); err != nil {
			t.Fatal(err)
		}
	}
	return old
}

// CheckTouched fails the test for every chunk that is missing or whose
// atime is before since.
func CheckTouched(t testing.TB, s *store.Store, chunks []chunk.Digest, since time.Time) {
	t.Helper()
	for _, d := range chunks {
		info, err := s.StatChunk(d)
		if err != nil {
			t.Error(err)
		} else if info.Atime.Before(since) {
			t.Errorf("chunk %s: atime %v, not touched since %v", d, info.Atime, since)
		}
	}
}

// AgeAllChunks sets the atime and mtime of every file in the store's
// chunk directories (chunks, .bad copies, temporary files) age back, as
// if nothing had used them since; it lists only the prefix directories
// the store has made.
func AgeAllChunks(t testing.TB, s *store.Store, age time.Duration) {
	t.Helper()
	old := time.Now().Add(-age)
	root := filepath.Join(s.Root(), ".chunks")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(p) == root {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// HasChunk is s.HasChunk; a look that fails fails the test.
func HasChunk(t testing.TB, s *store.Store, d chunk.Digest) bool {
	t.Helper()
	has, err := s.HasChunk(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return has
}
