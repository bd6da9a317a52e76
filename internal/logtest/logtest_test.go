package logtest

import (
	"sync"
	"testing"
)

// TestBufferConcurrent: lines logged from many goroutines while another
// reads all arrive whole (run with -race).
func TestBufferConcurrent(t *testing.T) {
	log, buf := Logger()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				log.Debug("line", "k", "v")
				_ = buf.String()
			}
		})
	}
	wg.Wait()
	if n := buf.Count("level=DEBUG msg=line k=v\n"); n != 800 {
		t.Fatalf("%d whole lines, want 800:\n%s", n, buf.String())
	}
}
