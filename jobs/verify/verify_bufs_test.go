package verify

import (
	"testing"

	"github.com/cairnfs/cairn/chunk"
)

// TestBlobBufsBound: the free list keeps at most its count, never a
// buffer larger than a chunk's blob, and hands back what it kept.
func TestBlobBufsBound(t *testing.T) {
	b := newBlobBufs(3)
	for range 5 {
		b.put(make([]byte, 0, 1<<20))
	}
	b.put(make([]byte, 0, maxBlobBuf+1)) // too big: dropped
	b.put(nil)
	if len(b) != 3 {
		t.Fatalf("%d buffers kept, want 3", len(b))
	}
	for range 3 {
		if buf := b.get(); cap(buf) != 1<<20 {
			t.Fatalf("got a buffer of %d bytes", cap(buf))
		}
	}
	if buf := b.get(); buf != nil {
		t.Fatal("an empty list handed out a buffer")
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
