package hostile

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// ReadTimeout is how long a read of hostile data may take to return data
// or an error. It detects hangs, not slowness: a read that loops never
// returns, while a first read through a fresh -race mount on a loaded
// 2-core machine has taken over 5 s.
const ReadTimeout = 20 * time.Second

// InTime runs fn and fails the test if fn has not returned within
// ReadTimeout. The failure is a panic holding every goroutine's stack,
// not t.Fatal: fn still runs, and the test's cleanups (closing what fn
// reads, unmounting under it) would block or crash on it.
func InTime(t testing.TB, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(ReadTimeout):
		buf := make([]byte, 1<<20)
		panic(fmt.Sprintf("%s: %s: no answer in %v\n%s", t.Name(), what, ReadTimeout, buf[:runtime.Stack(buf, true)]))
	}
}
