package miniotest

import (
	"context"
	"net/http"
	"strings"
	"sync"
)

// A watch waits for requests through the proxy: done is closed (after
// then, if any) once left requests have matched (status 0: on arrival;
// unreachable; else the server's answer).
type watch struct {
	match func(r *http.Request, status int) bool
	then  func()
	left  int
	done  chan struct{}
}

// watches are the proxy's pending watches.
type watches struct {
	mu   sync.Mutex
	list []*watch
}

// add registers a watch of n requests that match and returns its
// channel; then (if not nil) runs as the n-th is counted, before its
// client has the answer.
func (ws *watches) add(n int, match func(r *http.Request, status int) bool, then func()) <-chan struct{} {
	w := &watch{match: match, then: then, left: n, done: make(chan struct{})}
	if n <= 0 {
		if then != nil {
			then()
		}
		close(w.done)
		return w.done
	}
	ws.mu.Lock()
	ws.list = append(ws.list, w)
	ws.mu.Unlock()
	return w.done
}

// see counts r (with the server's answer status, or 0 on arrival) in the
// watches it matches, closing and dropping those complete.
func (ws *watches) see(r *http.Request, status int) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	kept := ws.list[:0]
	for _, w := range ws.list {
		if w.match(r, status) {
			w.left--
		}
		if w.left == 0 {
			if w.then != nil {
				w.then()
			}
			close(w.done)
			continue
		}
		kept = append(kept, w)
	}
	clear(ws.list[len(kept):])
	ws.list = kept
}

// NextRequest returns a channel closed when a request reaches the proxy
// after this call (before its delay): what a test waits on to know that
// a client has met a server it stopped.
func (p *Proxy) NextRequest() <-chan struct{} {
	return p.watches.add(1, func(_ *http.Request, status int) bool { return status == 0 }, nil)
}

// PutsStored returns a channel closed once n PUT requests (not copies)
// of keys containing part, made after this call, have been answered 2xx
// by the server: n objects written, without listing the bucket again and
// again to find out.
func (p *Proxy) PutsStored(part string, n int) <-chan struct{} {
	return p.watches.add(n, storedPut(part), nil)
}

// storedPut matches a PUT (not a copy) of a key containing part that the
// server answered 2xx.
func storedPut(part string) func(r *http.Request, status int) bool {
	return func(r *http.Request, status int) bool {
		return status >= 200 && status < 300 && r.Method == http.MethodPut &&
			r.Header.Get("X-Amz-Copy-Source") == "" && strings.Contains(objectKey(r), part)
	}
}

// unreachable is the status a watch sees for a request the proxy answered
// 503 itself: the server behind it could not be reached.
const unreachable = -1

// Unreachable returns a channel closed when the proxy answers a request
// 503 because the server behind it cannot be reached (stopped), after
// this call: what a test waits on to know that a client has met the
// outage.
func (p *Proxy) Unreachable() <-chan struct{} {
	return p.watches.add(1, func(_ *http.Request, status int) bool { return status == unreachable }, nil)
}

// HoldAfterPuts is PutsStored that also closes the proxy's gate as the
// n-th PUT is answered: every request after it waits (past its delay)
// until Release, so the test can act in the middle of a client's work
// however fast or slow the client runs.
func (p *Proxy) HoldAfterPuts(part string, n int) <-chan struct{} {
	return p.watches.add(n, storedPut(part), p.gate.hold)
}

// Release opens the gate: the requests it held go on.
func (p *Proxy) Release() { p.gate.release() }

// gate holds requests while closed (held not nil).
type gate struct {
	mu   sync.Mutex
	held chan struct{} // closed on release
}

func (g *gate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held == nil {
		g.held = make(chan struct{})
	}
}

func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}

// pass waits while the gate is closed; false if ctx ended first.
func (g *gate) pass(ctx context.Context) bool {
	g.mu.Lock()
	held := g.held
	g.mu.Unlock()
	if held == nil {
		return true
	}
	select {
	case <-held:
		return true
	case <-ctx.Done():
		return false
	}
}
