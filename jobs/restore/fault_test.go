package restore

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

// truncatingReader truncates chunk d's file once it has been mapped for
// a reader, as a damaged disk or another program might.
type truncatingReader struct {
	*store.Store
	d      chunk.Digest
	mapped bool
}

func (r *truncatingReader) ReadChunk(ctx context.Context, d chunk.Digest, opt store.ChunkOptions) (store.Blob, error) {
	b, err := r.Store.ReadChunk(ctx, d, opt)
	if err == nil && d == r.d && b.Mapped() {
		r.mapped = true
		if err := os.Truncate(r.Store.ChunkPath(d), 0); err != nil {
			panic(err)
		}
	}
	return b, err
}

// A chunk file truncated while mapped by a restore, to a file or to a
// stream, fails the restore with ErrChunkFault naming the offset (not a
// crash), or with IgnoreErrors is a damaged range of zeros.
func TestImageChunkFault(t *testing.T) {
	s, x, img := fixture(t)
	d, start, end := x.Chunk(3)
	p := s.ChunkPath(d)
	blob, err := os.ReadFile(p) // also brings it into the page cache
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		for _, ignore := range []bool{false, true} {
			if err := os.WriteFile(p, blob, 0o644); err != nil {
				t.Fatal(err)
			}
			os.ReadFile(p)
			src := &truncatingReader{Store: s, d: d}
			var buf bytes.Buffer
			out := filepath.Join(t.TempDir(), "out")
			f, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			tg := Target{File: f}
			if stream {
				tg = Target{Stream: &buf}
			}
			rep, err := Image(context.Background(), x, src, tg, Options{Threads: 2, IgnoreErrors: ignore})
			f.Close()
			if !src.mapped {
				t.Skip("chunk file not mapped: cachestat needs Linux 6.5")
			}
			if !ignore {
				if !errors.Is(err, store.ErrChunkFault) || !bytes.Contains([]byte(err.Error()), []byte("archive offset 196608")) {
					t.Fatalf("stream %v: %v, want ErrChunkFault at offset %d", stream, err, start)
				}
				continue
			}
			if !errors.Is(err, ErrDamaged) || len(rep.Damaged) != 1 || rep.Damaged[0].Offset != start {
				t.Fatalf("stream %v, ignore-errors: %v %+v", stream, err, rep)
			}
			got := buf.Bytes()
			if !stream {
				got, _ = os.ReadFile(out)
			}
			want := bytes.Clone(img)
			copy(want[start:end], make([]byte, end-start))
			if !bytes.Equal(got, want) {
				t.Fatalf("stream %v: damaged range is not zeros, or the rest differs", stream)
			}
		}
	}
}
