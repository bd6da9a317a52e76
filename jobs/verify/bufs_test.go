package verify

import (
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/directio"
)

// TestBlobBufsBound: the free list keeps at most its count, never a
// buffer larger than a chunk's blob, and hands back what it kept.
func TestBlobBufsBound(t *testing.T) {
	b := newBlobBufs(3, blobCap(2<<20))
	for range 5 {
		b.put(make([]byte, 0, 1<<20))
	}
	b.put(make([]byte, 0, maxBlobBuf+1)) // too big: dropped
	b.put(nil)
	if len(b.free) != 3 {
		t.Fatalf("%d buffers kept, want 3", len(b.free))
	}
	for range 3 {
		if buf := b.get(); cap(buf) != 1<<20 {
			t.Fatalf("got a buffer of %d bytes", cap(buf))
		}
	}
	// A new buffer holds the largest blob, aligned for O_DIRECT.
	if buf := b.get(); cap(buf) < 2<<20+chunk.EncryptedHeaderSize+directio.Align || len(buf) != 0 {
		t.Fatalf("a new buffer of %d bytes (length %d)", cap(buf), len(buf))
	}
	if got := newBlobBufs(1, 1<<40).get(); cap(got) > maxBlobBuf {
		t.Fatalf("a new buffer of %d bytes, beyond any blob", cap(got))
	}
}

// TestDecodeCap: a worker's decode buffer fits the largest chunk the
// items name, never more than the largest chunk there can be.
func TestDecodeCap(t *testing.T) {
	for _, tt := range []struct {
		sizes []int64
		want  int
	}{
		{nil, 64}, {[]int64{1 << 20, 3 << 20, 2 << 20}, 3<<20 + 64}, {[]int64{1 << 40}, chunk.MaxChunkSize + 64},
	} {
		var items []item
		for _, n := range tt.sizes {
			items = append(items, item{size: n})
		}
		if got := decodeCap(items); got != tt.want {
			t.Errorf("sizes %v: %d, want %d", tt.sizes, got, tt.want)
		}
	}
}
