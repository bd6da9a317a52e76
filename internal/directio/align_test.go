package directio

import "testing"

// Buf returns aligned room of the size asked, reusing the buffer when it
// is large enough and growing it when not, whatever the buffer's start.
func TestBuf(t *testing.T) {
	var buf []byte
	for _, n := range []int{1, Align - 1, Align, Align + 1, 3*Align + 17, 64 << 10} {
		b := Buf(&buf, n)
		if len(b) != n || !Aligned(b) {
			t.Fatalf("Buf(%d): len %d, aligned %v", n, len(b), Aligned(b))
		}
		again := Buf(&buf, n)
		if &again[0] != &b[0] {
			t.Fatalf("Buf(%d) did not reuse a large enough buffer", n)
		}
	}
	odd := make([]byte, 2*Align)[1:] // starts off the alignment
	b := Buf(&odd, Align)
	if !Aligned(b) || len(b) != Align {
		t.Fatalf("Buf of a misaligned buffer: aligned %v, len %d", Aligned(b), len(b))
	}
	if RoundUp(0) != 0 || RoundUp(1) != Align || RoundUp(Align) != Align || RoundUp(Align+1) != 2*Align {
		t.Fatal("RoundUp")
	}
}
