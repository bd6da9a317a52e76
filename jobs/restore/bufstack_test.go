package restore

import "testing"

// TestBufStack: buffers come back last in, first out, emptied, and no
// more than max are kept.
func TestBufStack(t *testing.T) {
	s := bufStack{max: 2}
	if s.get() != nil {
		t.Fatal("an empty stack gave a buffer")
	}
	a, b, c := make([]byte, 3, 8), make([]byte, 5, 16), make([]byte, 1, 32)
	s.put(nil)
	s.put(a)
	s.put(b)
	s.put(c) // beyond max: let go
	if got := s.get(); cap(got) != 16 || len(got) != 0 {
		t.Fatalf("first get: len %d cap %d, want the last put (cap 16), empty", len(got), cap(got))
	}
	if got := s.get(); cap(got) != 8 {
		t.Fatalf("second get: cap %d, want 8", cap(got))
	}
	if s.get() != nil {
		t.Fatal("a third buffer was kept beyond max")
	}
}
