package main

import (
	"fmt"
	"io"
	"maps"
	"math/bits"
	"net/http"
	"sync"
)

// stats counts the requests the proxy passed on.
type stats struct {
	mu       sync.Mutex
	inFlight int
	c        counts
}

// counts is what GET /-/s3proxy-stats answers.
type counts struct {
	Requests    map[string]int `json:"requests"`      // by method
	Kinds       map[string]int `json:"kinds"`         // by what they do (kind): get, put, list, delete-batch, …
	BytesIn     int64          `json:"bytes_in"`      // request bodies
	BytesOut    int64          `json:"bytes_out"`     // response bodies
	MaxInFlight int            `json:"max_in_flight"` // requests at once, delay included
	// Sizes counts requests by the size of their body (PUT) or of their
	// answer (GET), in power-of-two classes: "<4K", "4K-8K", … "4M-8M".
	Sizes map[string]int `json:"sizes"`
}

func newStats() *stats {
	return &stats{c: counts{Requests: map[string]int{}, Kinds: map[string]int{}, Sizes: map[string]int{}}}
}

// begin counts request r; the function it returns ends it.
func (s *stats) begin(r *http.Request) func() {
	body := &countingBody{ReadCloser: r.Body}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = body
	}
	s.mu.Lock()
	s.c.Requests[r.Method]++
	s.c.Kinds[kind(r)]++
	s.inFlight++
	s.c.MaxInFlight = max(s.c.MaxInFlight, s.inFlight)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.inFlight--
		s.c.BytesIn += body.n
		s.mu.Unlock()
		if body.n > 0 {
			s.size(body.n)
		}
	}
}

// sent counts a response body of n bytes.
func (s *stats) sent(n int64) {
	s.mu.Lock()
	s.c.BytesOut += n
	s.mu.Unlock()
	if n > 0 {
		s.size(n)
	}
}

func (s *stats) size(n int64) {
	s.mu.Lock()
	s.c.Sizes[sizeClass(n)]++
	s.mu.Unlock()
}

// sizeClass names n's power-of-two class, from "<4K" up.
func sizeClass(n int64) string {
	if n < 4<<10 {
		return "<4K"
	}
	lo := int64(1) << (bits.Len64(uint64(n)) - 1)
	return human(lo) + "-" + human(2*lo)
}

func human(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprint(n>>20, "M")
	}
	return fmt.Sprint(n>>10, "K")
}

// snapshot returns a copy of the counts, reset to zero when asked.
func (s *stats) snapshot(reset bool) counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.c
	c.Requests, c.Kinds, c.Sizes = maps.Clone(s.c.Requests), maps.Clone(s.c.Kinds), maps.Clone(s.c.Sizes)
	if reset {
		s.c = counts{Requests: map[string]int{}, Kinds: map[string]int{}, Sizes: map[string]int{}, MaxInFlight: s.inFlight}
	}
	return c
}

type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// Flush passes a flush on (httputil.ReverseProxy flushes streamed bodies).
func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
