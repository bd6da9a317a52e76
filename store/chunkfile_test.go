package store

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"golang.org/x/sys/unix"
)

// TestChunkFileNotRegular puts what is not a regular file where chunk
// files are (a FIFO, which blocks an open for reading until a writer
// comes; a directory; a symlink to a character device): every way of
// loading the chunk fails at once with an error naming it.
func TestChunkFileNotRegular(t *testing.T) {
	s := testStore(t)
	kinds := map[string]func(path string) error{
		"fifo":   func(p string) error { return unix.Mkfifo(p, 0o644) },
		"dir":    func(p string) error { return os.Mkdir(p, 0o755) },
		"device": func(p string) error { return os.Symlink("/dev/zero", p) },
	}
	for name, mk := range kinds {
		t.Run(name, func(t *testing.T) {
			d := chunk.Sum([]byte("not a regular file: " + name))
			path := s.ChunkPath(d)
			if err := os.MkdirAll(path[:len(path)-65], 0o755); err != nil {
				t.Fatal(err)
			}
			if err := mk(path); err != nil {
				t.Fatal(err)
			}
			c, err := NewCache(s, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			loads := map[string]func() error{
				"ReadChunk":          func() error { _, err := s.ReadChunk(ctx, d, ChunkOptions{}); return err },
				"ReadChunk mapped":   func() error { _, err := s.ReadChunk(ctx, d, ChunkOptions{Map: MapCached}); return err },
				"ReadChunk buffered": func() error { _, err := s.ReadChunk(ctx, d, ChunkOptions{Direct: DirectNever}); return err },
				"ReadChunk direct":   func() error { _, err := s.ReadChunk(ctx, d, ChunkOptions{Direct: DirectAlways}); return err },
				"Cache.Get":          func() error { _, err := c.Get(ctx, d, 4096); return err },
			}
			for what, load := range loads {
				done := make(chan error, 1)
				go func() { done <- load() }()
				select {
				case err := <-done:
					if err == nil || !IsChunkError(err) {
						t.Errorf("%s: %v, want a chunk error", what, err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("%s: no answer in 5 s", what) // (leaks the stuck goroutine)
				}
			}
		})
	}
}
