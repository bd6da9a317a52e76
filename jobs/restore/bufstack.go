package restore

import "sync"

// bufStack holds chunk buffers that the workers of a restore share: a
// worker takes one only while it decodes and writes a chunk, and puts it
// back after. Buffers are reused last in, first out, so a restore with
// more I/O workers than chunks in flight touches memory for the chunks in
// flight only: on a virtual machine a first touch of a page (a page
// fault) costs about 30 µs, and a buffer per worker was a quarter of an
// image restore's CPU time. It holds at most max buffers.
type bufStack struct {
	mu   sync.Mutex
	bufs [][]byte
	max  int
}

// get returns a buffer to reuse, or nil when none is free.
func (s *bufStack) get() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.bufs)
	if n == 0 {
		return nil
	}
	b := s.bufs[n-1]
	s.bufs[n-1] = nil
	s.bufs = s.bufs[:n-1]
	return b
}

// put gives back b (nil does nothing); beyond max it is let go.
func (s *bufStack) put(b []byte) {
	if b == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bufs) < s.max {
		s.bufs = append(s.bufs, b[:0])
	}
}
