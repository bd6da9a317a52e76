package chunkcache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
)

// testCS is the chunk size of the tests' images by default.
const testCS = 64 << 10

// errMissing is dirSource's error for a chunk it does not hold.
var errMissing = errors.New("missing chunk")

// dirSource is a Source of chunk files in a directory, one DataBlob per
// file named by its digest, each read into the cache's buffer when it
// fits there (as a store's chunk directory is read).
type dirSource struct{ dir string }

func (s dirSource) ReadBlob(_ context.Context, d chunk.Digest, buf []byte, _ bool) (Blob, error) {
	f, err := os.Open(filepath.Join(s.dir, d.String()))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("chunk %s: %w", d, errMissing)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	n := int(fi.Size())
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	if _, err := io.ReadFull(f, buf[:n]); err != nil {
		return nil, err
	}
	return &memBlob{data: buf[:n], inBuf: true}, nil
}

// memBlob is a Blob in memory.
type memBlob struct {
	data  []byte
	inBuf bool
}

func (b *memBlob) Bytes() []byte                       { return b.data }
func (b *memBlob) InBuf() bool                         { return b.inBuf }
func (b *memBlob) Do(fn func(blob []byte) error) error { return fn(b.data) }
func (b *memBlob) Release()                            {}

// writeImage cuts data into chunks of cs bytes, stores each as a
// DataBlob (compressed where that makes it smaller) in a new dirSource
// and lists them in a fixed index, as an image backup does; it returns
// the source and the index, open.
func writeImage(t testing.TB, data []byte, cs int) (dirSource, index.Index) {
	t.Helper()
	src := dirSource{dir: t.TempDir()}
	path := filepath.Join(t.TempDir(), "disk.img.fidx")
	w, err := index.NewFixedWriter(path, cs)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += cs {
		piece := data[off:min(off+cs, len(data))]
		d := chunk.Sum(piece)
		blob, err := chunk.EncodeBlob(nil, piece, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src.dir, d.String()), blob, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(d, len(piece)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := index.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return src, x
}

// imageReader writes data as an image of chunks of cs bytes and returns
// a reader of it (read-ahead 4) through a new cache of cacheSize bytes.
func imageReader(t testing.TB, data []byte, cs int, cacheSize int64) (*Reader, *Cache) {
	t.Helper()
	return imageReaderAhead(t, data, cs, cacheSize, 4)
}

// imageReaderAhead is imageReader whose reader loads readahead chunks
// ahead.
func imageReaderAhead(t testing.TB, data []byte, cs int, cacheSize int64, readahead int) (*Reader, *Cache) {
	t.Helper()
	src, x := writeImage(t, data, cs)
	c, err := New(src, cacheSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return NewReader(context.Background(), x, c, readahead), c
}

// randBytes returns n random bytes, the same for the same seed: a
// ChaCha8 stream read into the slice at once (not byte by byte, each
// byte a write the race detector checks: 160 MiB of them took seconds).
func randBytes(n int, seed uint64) []byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	b := make([]byte, n)
	rand.NewChaCha8(s).Read(b)
	return b
}
